//! Attaching images in the client: `@path` mentions of image files ask the runtime to
//! read them, the message goes with its images once they are read (or the text comes
//! back to the composer with the reason), a pasted image path becomes a mention, and the
//! chat shows a chip per image.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::tui::scene::*;
use crate::support::tui::*;
use claw_tui::agent::{AgentEvent, ImageData, Message, UserMessage};
use claw_tui::tui::{Effect, Msg};
use crossterm::event::{Event, KeyCode};

fn shot(name: &str, width: u32, height: u32) -> ImageData {
    let mut bytes = std::io::Cursor::new(Vec::new());
    image::DynamicImage::new_rgb8(width, height)
        .write_to(&mut bytes, image::ImageFormat::Png)
        .unwrap();
    claw_tui::images::from_bytes(name, bytes.into_inner()).unwrap()
}

#[test]
fn a_mentioned_image_is_read_before_the_message_is_sent() {
    let mut app = app();
    typed(&mut app, "what is wrong in @shots/error.png and @notes.md?");
    assert_eq!(
        app.update(key(KeyCode::Enter)),
        [
            Effect::SaveHistory("what is wrong in @shots/error.png and @notes.md?".into()),
            Effect::LoadImages {
                text: "what is wrong in @shots/error.png and @notes.md?".into(),
                paths: vec!["shots/error.png".into()],
            }
        ]
    );
    let image = shot("error.png", 4, 3);
    let effects = app.update(Msg::ImagesLoaded {
        text: "what is wrong in @shots/error.png and @notes.md?".into(),
        result: Ok(vec![image.clone()]),
    });
    let [Effect::PromptMessage(message)] = effects.as_slice() else {
        panic!("{effects:?}")
    };
    assert_eq!(
        message.content,
        "what is wrong in @shots/error.png and @notes.md?"
    );
    assert_eq!(message.images, vec![image]);
}

#[test]
fn an_image_that_cannot_be_read_gives_the_text_back() {
    let mut app = app();
    typed(&mut app, "half typed");
    let effects = app.update(Msg::ImagesLoaded {
        text: "look at @gone.png".into(),
        result: Err(claw_tui::tui::attach::AttachError {
            path: "gone.png".into(),
            source: std::sync::Arc::new(claw_tui::images::ImageError::Read {
                name: "gone.png".into(),
                source: std::io::ErrorKind::NotFound.into(),
            }),
        }),
    });
    assert_eq!(effects, []);
    assert_eq!(app.composer().text(), "look at @gone.png\nhalf typed");
    let screen = format!("{}", draw(&mut app).backend());
    assert!(screen.contains("Cannot attach @gone.png"), "{screen}");
}

#[test]
fn a_pasted_image_path_becomes_a_mention() {
    let mut app = app();
    typed(&mut app, "see ");
    app.update(Msg::Term(Event::Paste("'/home/me/My Shot.png'".into())));
    assert_eq!(app.composer().text(), "see @\"/home/me/My Shot.png\" ");
    app.update(Msg::Term(Event::Paste("/etc/hosts".into())));
    assert_eq!(
        app.composer().text(),
        "see @\"/home/me/My Shot.png\" /etc/hosts"
    );
    let effects = app.update(key(KeyCode::Enter));
    assert!(
        effects.contains(&Effect::LoadImages {
            text: "see @\"/home/me/My Shot.png\" /etc/hosts".into(),
            paths: vec!["/home/me/My Shot.png".into()],
        }),
        "{effects:?}"
    );
}

#[test]
fn the_chat_shows_a_chip_per_image() {
    let mut app = app();
    let clock = Clock::new(&mut app);
    let message = Message::User(
        UserMessage::new("compare @a.png with @b.jpg")
            .with_images(vec![shot("a.png", 1280, 720), shot("b.png", 64, 64)]),
    );
    clock.at(&mut app, 0, agent(AgentEvent::AgentStart));
    clock.at(
        &mut app,
        0,
        agent(AgentEvent::MessageStart {
            message: message.clone(),
        }),
    );
    clock.at(&mut app, 0, agent(AgentEvent::MessageEnd { message }));
    insta::assert_snapshot!("user_message_with_images", draw(&mut app).backend());
}

/// The real client in a pseudo-terminal: an image mentioned with `@` (completed from
/// the workspace's files) and one pasted as a path are attached, shown as chips, and
/// stored with the session.
#[test]
fn images_attached_in_the_real_client() {
    use crate::support::bin::Sandbox;
    use crate::support::pty::{Tui, status_line};
    let sandbox = Sandbox::new();
    let shots = sandbox.workspace().join("shots");
    std::fs::create_dir_all(&shots).unwrap();
    let png = |w, h| {
        let mut bytes = std::io::Cursor::new(Vec::new());
        image::DynamicImage::new_rgb8(w, h)
            .write_to(&mut bytes, image::ImageFormat::Png)
            .unwrap();
        bytes.into_inner()
    };
    std::fs::write(shots.join("screen.png"), png(320, 200)).unwrap();
    let dropped = sandbox.dir.path().join("My Drop.png");
    std::fs::write(&dropped, png(64, 48)).unwrap();

    let mut tui = Tui::demo(sandbox.dir.path(), "0", &[]);
    tui.wait_text("Welcome to claw-tui");
    tui.wait_for("the idle state", |s| status_line(s).contains("idle"));
    tui.send("describe @shots/scr");
    tui.wait_text("shots/screen.png");
    // Tab-free: Enter takes the highlighted completion, the second Enter sends.
    tui.send("\r");
    tui.wait_text("describe @shots/screen.png");
    tui.send("\r");
    tui.wait_text("[image: screen.png 320×200,");
    tui.wait_for("the answer", |s| status_line(s).contains("idle"));

    // A terminal pastes a dropped file as its quoted path (bracketed paste).
    tui.send(&format!("\x1b[200~'{}'\x1b[201~", dropped.display()));
    tui.wait_text("@\"");
    tui.send("\r");
    tui.wait_text("[image: My Drop.png 64×48,");
    tui.wait_for("the answer", |s| status_line(s).contains("idle"));
    tui.send("\x03");
    tui.wait_text("again to quit");
    tui.send("\x03");
    tui.wait_exit();

    let images = sandbox.stored_images();
    assert_eq!(images.len(), 2, "{images:?}");
}
