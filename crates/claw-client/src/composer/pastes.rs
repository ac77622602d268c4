//! Large pastes as chips: a paste longer than the composer can show is put in as one
//! line, `[paste #1: 200 lines, 6.1 KiB]`, and the message is sent with the whole text
//! where the chip stands. The editor key opens the message with the pastes whole.
//! A chip that was edited is no longer one: its text goes as typed.

use super::MAX_ROWS;
use claw_text::byte_size;

/// A paste over this many bytes is a chip, however few its lines.
const CHIP_BYTES: usize = 2000;

/// The pastes shown as chips in the composer, in paste order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Pastes {
    /// Each chip's text and the paste it stands for.
    chips: Vec<(String, String)>,
}

impl Pastes {
    /// Whether `text` is a paste to show as a chip: more lines than the composer
    /// shows, or long.
    pub(crate) fn is_large(text: &str) -> bool {
        text.lines().count() > usize::from(MAX_ROWS) || text.len() > CHIP_BYTES
    }

    /// Keeps `text` and returns the chip that stands for it.
    pub(crate) fn chip(&mut self, text: String) -> String {
        let lines = text.lines().count();
        let chip = format!(
            "[paste #{}: {lines} line{}, {}]",
            self.chips.len() + 1,
            if lines == 1 { "" } else { "s" },
            byte_size(text.len() as u64)
        );
        self.chips.push((chip.clone(), text));
        chip
    }

    /// `shown` with each chip in it replaced by its paste (its first place only; what
    /// a paste holds is never read for chips).
    pub(crate) fn expand(&self, shown: &str) -> String {
        if self.chips.is_empty() {
            return shown.to_owned();
        }
        let mut out = String::with_capacity(shown.len());
        let mut used = vec![false; self.chips.len()];
        let mut rest = shown;
        // The chip that comes first in what is left of the shown text, each once.
        while let Some((at, i)) = self
            .chips
            .iter()
            .enumerate()
            .filter(|(i, _)| !used[*i])
            .filter_map(|(i, (chip, _))| rest.find(chip.as_str()).map(|at| (at, i)))
            .min()
        {
            let (chip, paste) = &self.chips[i];
            out.push_str(&rest[..at]);
            out.push_str(paste);
            rest = &rest[at + chip.len()..];
            used[i] = true;
        }
        out.push_str(rest);
        out
    }

    /// How many pastes are held.
    pub(crate) fn len(&self) -> usize {
        self.chips.len()
    }

    /// Forgets every paste (the message was sent or cleared).
    pub(crate) fn clear(&mut self) {
        self.chips.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(n: usize) -> String {
        (1..=n).map(|i| format!("line {i}\n")).collect()
    }

    #[test]
    fn a_long_paste_is_a_chip_that_expands_to_the_whole_text() {
        assert!(!Pastes::is_large(&lines(8)));
        assert!(Pastes::is_large(&lines(9)));
        assert!(Pastes::is_large(&"x".repeat(2001)));
        let mut pastes = Pastes::default();
        let long = lines(200);
        let chip = pastes.chip(long.clone());
        assert_eq!(chip, "[paste #1: 200 lines, 1.7 KiB]");
        let second = pastes.chip("y".repeat(3000));
        assert_eq!(second, "[paste #2: 1 line, 2.9 KiB]");
        let message = format!("look at this: {chip} and {second} please");
        assert_eq!(
            pastes.expand(&message),
            format!("look at this: {long} and {} please", "y".repeat(3000))
        );
    }

    #[test]
    fn an_edited_chip_goes_as_typed_and_a_paste_that_looks_like_a_chip_is_kept() {
        let mut pastes = Pastes::default();
        let chip = pastes.chip(lines(20));
        let edited = chip.replace("#1", "#one");
        assert_eq!(pastes.expand(&edited), edited);
        // The paste itself holds a chip's text: it is not expanded again.
        let mut tricky = Pastes::default();
        let first = tricky.chip(format!("[paste #2: 9 lines, 63 B]\n{}", lines(9)));
        let second = tricky.chip(lines(9));
        assert_eq!(second, "[paste #2: 9 lines, 63 B]");
        let sent = tricky.expand(&format!("{first} {second}"));
        assert_eq!(
            sent,
            format!("[paste #2: 9 lines, 63 B]\n{} {}", lines(9), lines(9))
        );
    }
}
