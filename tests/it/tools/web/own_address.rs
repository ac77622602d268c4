//! `web_fetch` refuses this machine's own interface addresses, public ones included:
//! the fake model asks for a page from a listener on such an address through the real
//! binary, and the listener sees no connection.

use crate::support::bin::{Sandbox, run};
use crate::support::fake_llm::openai::{chunk, done_marker, finish, text_reply, tool};
use crate::support::fake_llm::{FakeLlm, Scripted};
use serde_json::{Value, json};
use std::net::{IpAddr, Ipv4Addr, TcpListener};

/// Whether the address rule refuses `ip` by its kind alone.
fn private_kind(ip: Ipv4Addr) -> bool {
    let [a, b, ..] = ip.octets();
    ip.is_loopback()
        || ip.is_private()
        || ip.is_link_local()
        || (a == 100 && (64..128).contains(&b))
        || a == 0
}

/// An IPv4 address of one of this machine's interfaces, a public-looking one when there
/// is one.
fn own_address() -> Ipv4Addr {
    let own: Vec<Ipv4Addr> = nix::ifaddrs::getifaddrs()
        .unwrap()
        .filter_map(|i| Some(i.address?.as_sockaddr_in()?.ip()))
        .collect();
    if let Some(public) = own.iter().find(|ip| !private_kind(**ip)) {
        return *public;
    }
    eprintln!(
        "note: no interface here has an address that is not private or loopback ({own:?}); \
         the test falls back to one the address rule refuses by its kind"
    );
    own.iter()
        .find(|ip| !ip.is_loopback())
        .copied()
        .unwrap_or(Ipv4Addr::LOCALHOST)
}

#[tokio::test(flavor = "multi_thread")]
async fn fetching_this_machines_own_address_is_refused_before_connecting() {
    let ip = own_address();
    let listener = TcpListener::bind((ip, 0)).unwrap();
    listener.set_nonblocking(true).unwrap();
    let url = format!("http://{}/secret", listener.local_addr().unwrap());
    let server = FakeLlm::start(vec![
        Scripted::sse([
            chunk(json!({"role": "assistant", "content": ""}), None),
            tool(
                Some(0),
                Some("call_1"),
                Some("web_fetch"),
                &json!({ "url": url }).to_string(),
            ),
            finish("tool_calls"),
            done_marker(),
        ]),
        Scripted::sse(text_reply(&["Refused."])),
    ])
    .await;
    let sb = Sandbox::new();
    sb.write_config(&format!(
        "provider = \"fake\"\n[providers.fake]\napi = \"openai\"\nbase_url = \"{}/v1\"\n\
         model = \"m\"\n",
        server.url()
    ));
    let mut cmd = sb.command();
    cmd.args(["-p", "fetch it"]);
    let (code, _, stderr) = tokio::task::spawn_blocking(move || run(cmd)).await.unwrap();
    assert_eq!(code, 0, "{stderr}");
    let body: &Value = &server.requests()[1].body;
    let result = body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap_or_default().to_owned())
        .unwrap();
    assert!(result.starts_with("Refused to fetch"), "{result}");
    if !private_kind(ip) {
        assert!(
            result.contains(&format!("{} is an address of this machine", IpAddr::V4(ip))),
            "{result}"
        );
    }
    let accepted = listener.accept();
    assert!(
        matches!(&accepted, Err(e) if e.kind() == std::io::ErrorKind::WouldBlock),
        "the listener was reached: {accepted:?}"
    );
}
