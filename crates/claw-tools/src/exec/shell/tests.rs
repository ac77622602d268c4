//! The lexer on the scripts the deny rules and the trust read.
use super::*;

fn words(script: &str) -> Vec<Vec<String>> {
    parse(script)
        .segments
        .into_iter()
        .map(|s| s.words)
        .collect()
}

#[test]
fn splits_chains_and_removes_quotes() {
    assert_eq!(
        words("a 'b c' && d \"e f\"|g;h || i & j"),
        vec![
            vec!["a", "b c"],
            vec!["d", "e f"],
            vec!["g"],
            vec!["h"],
            vec!["i"],
            vec!["j"]
        ]
    );
}

#[test]
fn redirections_are_not_words() {
    let parsed = parse("echo hi 2>&1 >> out.txt < in &> all 1>/dev/sda");
    assert_eq!(parsed.segments[0].words, vec!["echo", "hi"]);
    assert_eq!(
        parsed.segments[0].out_targets,
        vec!["out.txt", "all", "/dev/sda"]
    );
}

#[test]
fn collects_substitutions_and_heredocs() {
    let parsed = parse("echo $(rm -rf /) `reboot` <(mkfs x)\ncat <<'EOF'\nshutdown now\nEOF\nls");
    assert_eq!(
        parsed.nested,
        vec!["rm -rf /", "reboot", "mkfs x", "shutdown now\n"]
    );
    let last = parsed.segments.last().map(|s| s.words.clone());
    assert_eq!(last, Some(vec!["ls".to_owned()]));
}

#[test]
fn comments_and_escapes() {
    assert_eq!(words("r\\m -rf x # rm -rf /"), vec![vec!["rm", "-rf", "x"]]);
    assert_eq!(words("echo $'a\\'b'"), vec![vec!["echo", "a'b"]]);
}
