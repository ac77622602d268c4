//! The connection: one handler per ACP method, on the SDK's agent role over stdio. A
//! handler runs inside the SDK's dispatch loop, so none waits for the client: a prompt
//! is handed to its session's pump, which answers it when its turn ends.

use super::session::{AcpSession, Opening};
use super::{AGENT_NAME, initialize};
use crate::cli::Cli;
use crate::config::{ConfigError, Settings};
use crate::runtime::AgentMode;
use agent_client_protocol::v1::schema::{
    AuthenticateRequest, AuthenticateResponse, CancelNotification, ClientCapabilities,
    CloseSessionRequest, CloseSessionResponse, InitializeRequest, LoadSessionRequest,
    LoadSessionResponse, NewSessionRequest, NewSessionResponse, PromptRequest, SessionId,
    SetSessionConfigOptionRequest, SetSessionConfigOptionResponse, SetSessionModeRequest,
    SetSessionModeResponse,
};
use agent_client_protocol::{Agent, Error, ErrorCode, Stdio};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// The flags `claw-tui acp` was started with: every session's settings are resolved
/// from them, with the client's `cwd` as the workspace.
pub struct Base {
    cli: Cli,
    /// What the client said at `initialize` it can do (nothing before).
    client: Mutex<ClientCapabilities>,
}

impl Base {
    /// The base of the flags `cli`.
    pub fn new(cli: Cli) -> Self {
        Self {
            cli,
            client: Mutex::new(ClientCapabilities::default()),
        }
    }

    /// Keeps what the client offers (`initialize`), for the sessions opened after.
    pub fn remember_client(&self, capabilities: ClientCapabilities) {
        *self.client.lock().unwrap_or_else(|p| p.into_inner()) = capabilities;
    }

    /// What the client offers.
    pub fn client(&self) -> ClientCapabilities {
        self.client
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// The settings of a session in `cwd` (`None`: the workspace the flags name, else
    /// the process's directory), read afresh: the config file and the environment as
    /// they are now.
    pub fn settings(&self, cwd: Option<&Path>) -> Result<Settings, ConfigError> {
        let cli = Cli {
            workspace: cwd.map(Path::to_path_buf).or(self.cli.workspace.clone()),
            command: None,
            ..self.cli.clone()
        };
        crate::config::resolve(&cli.config_flags(), &|name| std::env::var(name).ok())
    }

    /// Where the log file goes: the settings' state dir, else the default one (the
    /// settings may not resolve before the user sets a key).
    pub fn state_dir(&self) -> PathBuf {
        match self.settings(None) {
            Ok(settings) => settings.state_dir,
            Err(_) => crate::config::default_paths().2,
        }
    }

    /// `--no-session`: sessions are not written (and cannot be loaded).
    pub fn no_session(&self) -> bool {
        self.cli.no_session
    }
}

/// What every handler shares: the flags and the sessions open on this connection.
pub struct Shared {
    /// The flags.
    pub base: Base,
    sessions: Mutex<HashMap<String, Arc<AcpSession>>>,
}

impl Shared {
    /// Nothing open yet.
    pub fn new(base: Base) -> Arc<Self> {
        Arc::new(Self {
            base,
            sessions: Mutex::new(HashMap::new()),
        })
    }

    fn session(&self, id: &SessionId) -> Result<Arc<AcpSession>, Error> {
        self.sessions
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(id.0.as_ref())
            .cloned()
            .ok_or_else(|| {
                agent_client_protocol::v1::schema::Error::session_not_found(id.clone()).into()
            })
    }

    fn insert(&self, session: Arc<AcpSession>) {
        self.sessions
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(session.id.clone(), session);
    }

    fn remove(&self, id: &SessionId) -> Option<Arc<AcpSession>> {
        self.sessions
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(id.0.as_ref())
    }

    fn is_open(&self, id: &str) -> bool {
        self.sessions
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .contains_key(id)
    }

    /// Closes every session: runs are stopped (what they streamed is recorded as
    /// aborted) and the files written. True when something could not be saved.
    pub async fn close_all(&self) -> bool {
        let sessions: Vec<Arc<AcpSession>> = self
            .sessions
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .drain()
            .map(|(_, s)| s)
            .collect();
        let mut unsaved = false;
        for session in sessions {
            unsaved |= session.close().await;
        }
        unsaved
    }
}

/// The error for settings that do not resolve: a missing key is ACP's "authentication
/// required" (the message names the variable), a workspace that cannot be used is the
/// client's `cwd` at fault, anything else (a broken config file) is ours.
pub fn settings_error(error: &ConfigError) -> Error {
    let code = match error {
        ConfigError::MissingKey { .. } => ErrorCode::AUTH_REQUIRED,
        ConfigError::Invalid(_) => ErrorCode::INVALID_PARAMS,
        ConfigError::Read { .. } | ConfigError::Parse { .. } => ErrorCode::INTERNAL_ERROR,
    };
    Error::new(code, error.to_string())
}

/// Serves the protocol on stdin and stdout until the client closes stdin.
pub async fn connect(shared: Arc<Shared>) -> Result<(), Error> {
    let (s1, s2, s3, s4, s5, s6, s7, s8, s9) = (
        shared.clone(),
        shared.clone(),
        shared.clone(),
        shared.clone(),
        shared.clone(),
        shared.clone(),
        shared.clone(),
        shared.clone(),
        shared,
    );
    Agent
        .v1()
        .name(AGENT_NAME)
        .on_receive_request(
            async move |request: InitializeRequest, responder, _cx| {
                s1.base.remember_client(request.client_capabilities.clone());
                responder.respond(initialize::response(&s1.base, &request))
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: AuthenticateRequest, responder, _cx| {
                match initialize::authenticate(&s2.base, &request) {
                    Ok(()) => responder.respond(AuthenticateResponse::new()),
                    Err(e) => responder.respond_with_error(e),
                }
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: NewSessionRequest, responder, cx| {
                let opening = Opening::New;
                match AcpSession::open(&s3.base, opening, &request.cwd, request.mcp_servers, cx)
                    .await
                {
                    Ok(session) => {
                        let response = NewSessionResponse::new(session.id.clone())
                            .modes(session.modes())
                            .config_options(session.config_options());
                        s3.insert(session.clone());
                        responder.respond(response)?;
                        session.announce_commands();
                        Ok(())
                    }
                    Err(e) => responder.respond_with_error(e),
                }
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: LoadSessionRequest, responder, cx| {
                let id = request.session_id.0.to_string();
                if s4.is_open(&id) {
                    return responder.respond_with_error(Error::new(
                        ErrorCode::INVALID_PARAMS,
                        format!("session {id} is already open on this connection"),
                    ));
                }
                let opening = Opening::Load(id);
                match AcpSession::open(&s4.base, opening, &request.cwd, request.mcp_servers, cx)
                    .await
                {
                    Ok(session) => {
                        let response = LoadSessionResponse::new()
                            .modes(session.modes())
                            .config_options(session.config_options());
                        s4.insert(session.clone());
                        responder.respond(response)?;
                        session.announce_commands();
                        Ok(())
                    }
                    Err(e) => responder.respond_with_error(e),
                }
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: PromptRequest, responder, _cx| {
                let session = match s5.session(&request.session_id) {
                    Ok(session) => session,
                    Err(e) => return responder.respond_with_error(e),
                };
                // Read here, in order: prompts reach the session in the order sent.
                match super::content::user_message(request.prompt, &session.workspace).await {
                    Ok(message) => {
                        session.prompt(message, responder);
                        Ok(())
                    }
                    Err(e) => responder.respond_with_error(Error::new(
                        ErrorCode::INVALID_PARAMS,
                        e.to_string(),
                    )),
                }
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_notification(
            async move |notification: CancelNotification, _cx| {
                // A cancel for a session that is gone has nothing left to stop.
                if let Ok(session) = s6.session(&notification.session_id) {
                    session.cancel();
                }
                Ok(())
            },
            agent_client_protocol::on_receive_notification!(),
        )
        .on_receive_request(
            async move |request: SetSessionModeRequest, responder, _cx| {
                let session = match s7.session(&request.session_id) {
                    Ok(session) => session,
                    Err(e) => return responder.respond_with_error(e),
                };
                match request.mode_id.0.parse::<AgentMode>() {
                    Ok(mode) => {
                        session.set_mode(mode);
                        responder.respond(SetSessionModeResponse::new())
                    }
                    Err(e) => responder
                        .respond_with_error(Error::new(ErrorCode::INVALID_PARAMS, e.to_string())),
                }
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: SetSessionConfigOptionRequest, responder, _cx| {
                let session = match s9.session(&request.session_id) {
                    Ok(session) => session,
                    Err(e) => return responder.respond_with_error(e),
                };
                let Some(value) = request.value.as_value_id() else {
                    return responder.respond_with_error(Error::new(
                        ErrorCode::INVALID_PARAMS,
                        "the model option takes a value id",
                    ));
                };
                match session.set_option(&request.config_id.0, &value.0) {
                    Ok(options) => responder.respond(SetSessionConfigOptionResponse::new(options)),
                    Err(e) => responder.respond_with_error(e),
                }
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: CloseSessionRequest, responder, _cx| {
                let Some(session) = s8.remove(&request.session_id) else {
                    return responder.respond_with_error(
                        agent_client_protocol::v1::schema::Error::session_not_found(
                            request.session_id,
                        )
                        .into(),
                    );
                };
                // Closing waits for the run to stop and the file to be written: not in
                // the dispatch loop, which must go on reading (the permission answers).
                tokio::spawn(async move {
                    session.close().await;
                    let _ = responder.respond(CloseSessionResponse::new());
                });
                Ok(())
            },
            agent_client_protocol::on_receive_request!(),
        )
        .connect_to(Stdio::new())
        .await
}
