use super::*;
use crossterm::event::{KeyEventKind, KeyEventState, MouseButton, MouseEvent, MouseEventKind};

fn all(bytes: &[u8]) -> Vec<Event> {
    Decoder::default().feed(bytes, false)
}

fn k(code: KeyCode, modifiers: KeyModifiers) -> Event {
    Event::Key(KeyEvent::new(code, modifiers))
}

fn plain(code: KeyCode) -> Event {
    k(code, KeyModifiers::NONE)
}

const SHIFT: KeyModifiers = KeyModifiers::SHIFT;
const CTRL: KeyModifiers = KeyModifiers::CONTROL;
const ALT: KeyModifiers = KeyModifiers::ALT;

#[test]
fn shift_enter_in_both_encodings_and_plain_enter() {
    // xterm's modifyOtherKeys (and tmux with extended-keys on), then the kitty form.
    assert_eq!(all(b"\x1b[27;2;13~"), [k(KeyCode::Enter, SHIFT)]);
    assert_eq!(all(b"\x1b[13;2u"), [k(KeyCode::Enter, SHIFT)]);
    assert_eq!(all(b"\r"), [plain(KeyCode::Enter)]);
    // Other modifiers and keys of the xterm form.
    assert_eq!(all(b"\x1b[27;5;13~"), [k(KeyCode::Enter, CTRL)]);
    assert_eq!(all(b"\x1b[27;3;13~"), [k(KeyCode::Enter, ALT)]);
    assert_eq!(all(b"\x1b[27;2;9~"), [k(KeyCode::BackTab, SHIFT)]);
    assert_eq!(
        all(b"\x1b[27;6;127~"),
        [k(KeyCode::Backspace, CTRL | SHIFT)]
    );
    assert_eq!(all(b"\x1b[27;5;27~"), [k(KeyCode::Esc, CTRL)]);
    assert_eq!(all(b"\x1b[27;5;99~"), [k(KeyCode::Char('c'), CTRL)]);
    assert_eq!(all(b"\x1b[27;5;44~"), [k(KeyCode::Char(','), CTRL)]);
}

#[test]
fn control_bytes_are_ctrl_keys() {
    assert_eq!(all(b"\x03"), [k(KeyCode::Char('c'), CTRL)]);
    assert_eq!(all(b"\n"), [k(KeyCode::Char('j'), CTRL)]);
    assert_eq!(all(b"\t"), [plain(KeyCode::Tab)]);
    assert_eq!(all(b"\x7f"), [plain(KeyCode::Backspace)]);
    assert_eq!(all(b"\x00"), [k(KeyCode::Char(' '), CTRL)]);
    assert_eq!(all(b"\x1c"), [k(KeyCode::Char('4'), CTRL)]);
}

#[test]
fn text_with_shift_on_capitals_and_utf8_split_between_reads() {
    assert_eq!(
        all("aB é".as_bytes()),
        [
            plain(KeyCode::Char('a')),
            k(KeyCode::Char('B'), SHIFT),
            plain(KeyCode::Char(' ')),
            plain(KeyCode::Char('é')),
        ]
    );
    let mut d = Decoder::default();
    let snowman = "☃".as_bytes();
    assert!(d.feed(&snowman[..1], false).is_empty());
    assert_eq!(d.feed(&snowman[1..], false), [plain(KeyCode::Char('☃'))]);
    // A byte that starts no character is skipped, and what follows still decodes.
    assert_eq!(all(b"\xffx"), [plain(KeyCode::Char('x'))]);
}

#[test]
fn esc_alone_esc_pairs_and_alt_keys() {
    assert_eq!(all(b"\x1b"), [plain(KeyCode::Esc)]);
    assert_eq!(all(b"\x1b\x1b"), [plain(KeyCode::Esc), plain(KeyCode::Esc)]);
    assert_eq!(all(b"\x1bx"), [k(KeyCode::Char('x'), ALT)]);
    assert_eq!(all(b"\x1b\r"), [k(KeyCode::Enter, ALT)]);
    assert_eq!(all(b"\x1b["), [k(KeyCode::Char('['), ALT)]);
    assert_eq!(all(b"\x1bO"), [k(KeyCode::Char('O'), ALT | SHIFT)]);
    // With more input waiting, a lone Esc is the start of a sequence.
    let mut d = Decoder::default();
    assert!(d.feed(b"\x1b", true).is_empty());
    assert_eq!(d.feed(b"[A", false), [plain(KeyCode::Up)]);
}

#[test]
fn cursor_editing_and_function_keys_with_modifiers() {
    assert_eq!(
        all(b"\x1b[A\x1bOB"),
        [plain(KeyCode::Up), plain(KeyCode::Down)]
    );
    assert_eq!(all(b"\x1b[1;5C"), [k(KeyCode::Right, CTRL)]);
    assert_eq!(all(b"\x1b[1;2H"), [k(KeyCode::Home, SHIFT)]);
    assert_eq!(all(b"\x1b[Z"), [k(KeyCode::BackTab, SHIFT)]);
    assert_eq!(all(b"\x1b[3~"), [plain(KeyCode::Delete)]);
    assert_eq!(all(b"\x1b[5;5~"), [k(KeyCode::PageUp, CTRL)]);
    assert_eq!(
        all(b"\x1bOP\x1b[15~\x1b[24~"),
        [
            plain(KeyCode::F(1)),
            plain(KeyCode::F(5)),
            plain(KeyCode::F(12)),
        ]
    );
    assert_eq!(all(b"\x1b[1;2P"), [k(KeyCode::F(1), SHIFT)]);
    assert_eq!(all(b"\x1b[[B"), [plain(KeyCode::F(2))]);
}

#[test]
fn kitty_keys_with_kinds_locks_keypad_and_shifted_alternates() {
    assert_eq!(all(b"\x1b[27u"), [plain(KeyCode::Esc)]);
    assert_eq!(all(b"\x1b[99;5u"), [k(KeyCode::Char('c'), CTRL)]);
    assert_eq!(all(b"\x1b[9;2u"), [k(KeyCode::BackTab, SHIFT)]);
    let release = KeyEvent::new_with_kind(
        KeyCode::Char('a'),
        KeyModifiers::NONE,
        KeyEventKind::Release,
    );
    assert_eq!(all(b"\x1b[97;1:3u"), [Event::Key(release)]);
    let caps = KeyEvent::new_with_kind_and_state(
        KeyCode::Char('a'),
        KeyModifiers::NONE,
        KeyEventKind::Press,
        KeyEventState::CAPS_LOCK,
    );
    assert_eq!(all(b"\x1b[97;65u"), [Event::Key(caps)]);
    let keypad = KeyEvent::new_with_kind_and_state(
        KeyCode::Enter,
        KeyModifiers::NONE,
        KeyEventKind::Press,
        KeyEventState::KEYPAD,
    );
    assert_eq!(all(b"\x1b[57414u"), [Event::Key(keypad)]);
    assert_eq!(all(b"\x1b[57376u"), [plain(KeyCode::F(13))]);
    assert_eq!(all(b"\x1b[97:65;2u"), [plain(KeyCode::Char('A'))]);
}

#[test]
fn mouse_in_sgr_x10_and_urxvt() {
    let at = |kind, column, row, modifiers| {
        Event::Mouse(MouseEvent {
            kind,
            column,
            row,
            modifiers,
        })
    };
    let none = KeyModifiers::NONE;
    assert_eq!(
        all(b"\x1b[<0;10;5M"),
        [at(MouseEventKind::Down(MouseButton::Left), 9, 4, none)]
    );
    assert_eq!(
        all(b"\x1b[<0;10;5m"),
        [at(MouseEventKind::Up(MouseButton::Left), 9, 4, none)]
    );
    assert_eq!(
        all(b"\x1b[<64;1;1M"),
        [at(MouseEventKind::ScrollUp, 0, 0, none)]
    );
    assert_eq!(
        all(b"\x1b[<65;3;2M"),
        [at(MouseEventKind::ScrollDown, 2, 1, none)]
    );
    assert_eq!(
        all(b"\x1b[<34;3;2M"),
        [at(MouseEventKind::Drag(MouseButton::Right), 2, 1, none)]
    );
    assert_eq!(
        all(b"\x1b[<35;3;2M"),
        [at(MouseEventKind::Moved, 2, 1, none)]
    );
    assert_eq!(
        all(b"\x1b[<16;3;2M"),
        [at(MouseEventKind::Down(MouseButton::Left), 2, 1, CTRL)]
    );
    assert_eq!(
        all(b"\x1b[M !!"),
        [at(MouseEventKind::Down(MouseButton::Left), 0, 0, none)]
    );
    assert_eq!(
        all(b"\x1b[M#!!"),
        [at(MouseEventKind::Up(MouseButton::Left), 0, 0, none)]
    );
    assert_eq!(
        all(b"\x1b[32;4;7M"),
        [at(MouseEventKind::Down(MouseButton::Left), 3, 6, none)]
    );
    // The X10 form's bytes may come in two reads.
    let mut d = Decoder::default();
    assert!(d.feed(b"\x1b[M ", false).is_empty());
    assert_eq!(
        d.feed(b"!!", false),
        [at(MouseEventKind::Down(MouseButton::Left), 0, 0, none)]
    );
}

#[test]
fn a_paste_is_one_event_even_across_reads_and_keeps_escapes_inside_it() {
    let mut d = Decoder::default();
    assert!(d.feed(b"\x1b[200~line one\r\n\x1b[A", false).is_empty());
    assert_eq!(
        d.feed(b"two\x1b[201~x", false),
        [
            Event::Paste("line one\r\n\x1b[Atwo".into()),
            plain(KeyCode::Char('x')),
        ]
    );
}

#[test]
fn focus_and_terminal_answers() {
    assert_eq!(all(b"\x1b[I\x1b[O"), [Event::FocusGained, Event::FocusLost]);
    // Answers to the client's questions (keyboard flags, DA1, a mode report, the
    // cursor position) are no keys, and what follows them is.
    assert_eq!(
        all(b"\x1b[?1u\x1b[?62;22c\x1b[?2026;2$y\x1b[12;40Rz"),
        [plain(KeyCode::Char('z'))]
    );
}

#[test]
fn broken_sequences_are_skipped_without_losing_what_follows() {
    // A control byte inside a sequence ends it; the byte is then decoded.
    assert_eq!(all(b"\x1b[12\r"), [plain(KeyCode::Enter)]);
    // A sequence that never ends is dropped once longer than any real one.
    let mut d = Decoder::default();
    let endless = [b"\x1b[".as_slice(), &[b'1'; 80]].concat();
    assert!(d.feed(&endless, false).is_empty());
    assert_eq!(d.feed(b"q", false), [plain(KeyCode::Char('q'))]);
    // Unknown final bytes and modifyOtherKeys without its code are nothing.
    assert_eq!(all(b"\x1b[5x\x1b[27;2~"), []);
}

#[test]
fn a_paste_read_in_many_pieces_is_searched_once_and_an_end_split_between_reads_is_found() {
    let mut d = Decoder::default();
    assert!(d.feed(b"\x1b[200~", false).is_empty());
    for _ in 0..1000 {
        assert!(d.feed(&[b'x'; 4096], false).is_empty());
    }
    // The end marker split between two reads.
    assert!(d.feed(b"\x1b[20", false).is_empty());
    let events = d.feed(b"1~q", false);
    let [Event::Paste(text), key] = events.as_slice() else {
        panic!("{events:?}");
    };
    assert_eq!(text.len(), 4096 * 1000);
    assert_eq!(*key, plain(KeyCode::Char('q')));
}

#[test]
fn ss3_forms_of_other_terminals() {
    // urxvt's Ctrl+arrows, a modifier in SS3 form, the keypad in application mode.
    assert_eq!(
        all(b"\x1bOa\x1bOd"),
        [k(KeyCode::Up, CTRL), k(KeyCode::Left, CTRL)]
    );
    assert_eq!(all(b"\x1bO5C"), [k(KeyCode::Right, CTRL)]);
    let keypad = |code| {
        Event::Key(KeyEvent::new_with_kind_and_state(
            code,
            KeyModifiers::NONE,
            KeyEventKind::Press,
            KeyEventState::KEYPAD,
        ))
    };
    assert_eq!(
        all(b"\x1bOM\x1bOp"),
        [keypad(KeyCode::Enter), keypad(KeyCode::Char('0'))]
    );
    // An unknown letter after `ESC O` is Alt+O and that letter, typed fast.
    assert_eq!(
        all(b"\x1bOz"),
        [
            k(KeyCode::Char('O'), ALT | SHIFT),
            plain(KeyCode::Char('z'))
        ]
    );
    // rxvt's and PuTTY's Alt with a key that has a sequence.
    assert_eq!(all(b"\x1b\x1b[A"), [k(KeyCode::Up, ALT)]);
}

#[test]
fn a_late_string_answer_is_skipped_whole_and_alt_bracket_stays_a_key() {
    // The background colour's answer after its question gave up: with BEL (which
    // would otherwise be Ctrl+G, the editor key) or ST, then what was typed.
    assert_eq!(
        all(b"\x1b]11;rgb:ffff/ffff/ffff\x07a\x1b]11;rgb:0/0/0\x1b\\b"),
        [plain(KeyCode::Char('a')), plain(KeyCode::Char('b'))]
    );
    assert_eq!(all(b"\x1b]"), [k(KeyCode::Char(']'), ALT)]);
    // Split between reads, it is waited for.
    let mut d = Decoder::default();
    assert!(d.feed(b"\x1b]11;rgb:1", true).is_empty());
    assert_eq!(d.feed(b"/2/3\x07x", true), [plain(KeyCode::Char('x'))]);
}

#[test]
fn a_byte_that_cannot_continue_a_character_does_not_hold_the_next_key_back() {
    // A Latin-1 é (0xe9) then Enter: Enter at once, not after two more bytes.
    assert_eq!(all(b"\xe9\r"), [plain(KeyCode::Enter)]);
}

#[test]
fn an_undecided_esc_waits_for_more_and_is_the_key_when_nothing_came() {
    let mut d = Decoder::default();
    assert!(d.feed(b"\x1b", true).is_empty());
    assert!(d.undecided());
    assert_eq!(d.feed(&[], false), [plain(KeyCode::Esc)]);
    assert!(!d.undecided());
    assert!(d.feed(b"\x1b[", true).is_empty());
    assert_eq!(d.feed(&[], false), [k(KeyCode::Char('['), ALT)]);
}
