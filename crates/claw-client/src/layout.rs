//! Where each pane goes, computed the same way by `update` (to know the chat's width
//! and height) and by `view`.

use ratatui::layout::{Constraint, Direction, Layout, Rect};

/// Below this width the side panes fold into tabs.
pub const NARROW_WIDTH: u16 = 100;
/// Below this width the side panes, when they show by themselves (`panes = "auto"`), are
/// tabs: the chat keeps the full width that tables and code need.
pub const AUTO_BESIDE_WIDTH: u16 = 140;
/// Smallest usable terminal.
pub const MIN_WIDTH: u16 = 40;
/// Smallest usable terminal.
pub const MIN_HEIGHT: u16 = 10;

/// The pane with keyboard focus.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Focus {
    /// The composer (typing).
    #[default]
    Composer,
    /// The chat (scrolling).
    Chat,
    /// The tool-call tree (selecting calls).
    Tree,
    /// The dashboard (subagents and cron jobs).
    Dashboard,
}

impl Focus {
    /// The next pane for Tab (or the previous one).
    pub fn cycle(self, forward: bool) -> Focus {
        const ORDER: [Focus; 4] = [Focus::Composer, Focus::Chat, Focus::Tree, Focus::Dashboard];
        let i = ORDER.iter().position(|f| *f == self).unwrap_or(0);
        let next = if forward { i + 1 } else { i + ORDER.len() - 1 };
        ORDER[next % ORDER.len()]
    }
}

/// The pane shown in the narrow layout.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tab {
    /// Chat (with composer focus too).
    Chat,
    /// Tool calls.
    Tools,
    /// Subagents and cron jobs.
    Dashboard,
}

impl Tab {
    /// The tab that shows the focused pane.
    pub fn of(focus: Focus) -> Tab {
        match focus {
            Focus::Composer | Focus::Chat => Tab::Chat,
            Focus::Tree => Tab::Tools,
            Focus::Dashboard => Tab::Dashboard,
        }
    }
}

/// Whether the tool tree and the dashboard show, as the user chose (`[ui] panes`, the
/// toggle key).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum PaneMode {
    /// Shown when there is something in them (a tool call, a subagent, a cron job, a
    /// client attached): beside the chat on a wide terminal, as tabs otherwise.
    #[default]
    Auto,
    /// Always shown: beside the chat, or as tabs on a narrow terminal.
    Shown,
    /// Never shown: the chat has the whole width.
    Hidden,
}

impl PaneMode {
    /// Where the side panes go in a terminal `width` columns wide, `busy` saying whether
    /// they have anything to show.
    pub fn side(self, width: u16, busy: bool) -> Side {
        match self {
            PaneMode::Hidden => Side::Off,
            PaneMode::Auto if !busy => Side::Off,
            PaneMode::Auto if width < AUTO_BESIDE_WIDTH => Side::Tabs,
            _ if width < NARROW_WIDTH => Side::Tabs,
            _ => Side::Beside,
        }
    }
}

impl From<claw_runtime::config::Panes> for PaneMode {
    fn from(setting: claw_runtime::config::Panes) -> Self {
        use claw_runtime::config::Panes;
        match setting {
            Panes::Auto => PaneMode::Auto,
            Panes::Show => PaneMode::Shown,
            Panes::Hide => PaneMode::Hidden,
        }
    }
}

/// Where the side panes go in one frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    /// Beside the chat, sharing the width.
    Beside,
    /// One pane at a time behind a tab bar; the chat has the full width.
    Tabs,
    /// Not shown: the chat has the full width and no tab bar.
    Off,
}

/// The areas of one frame.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Areas {
    /// The chat pane (with its border).
    pub chat: Option<Rect>,
    /// The tool tree pane.
    pub tree: Option<Rect>,
    /// The dashboard pane.
    pub dashboard: Option<Rect>,
    /// The tab bar (narrow layout only).
    pub tabs: Option<Rect>,
    /// The queue strip (zero height when empty).
    pub queue: Rect,
    /// The composer (with its top border).
    pub composer: Rect,
    /// The status bar.
    pub status: Rect,
    /// Whether the terminal is too small to show anything but a notice.
    pub too_small: bool,
}

/// Lays out a `size` terminal with `queue_rows` queued messages, a composer of
/// `composer_rows` text rows and the side panes at `side` (the focused pane is the tab
/// shown; with the panes off, the chat).
pub fn areas(size: Rect, queue_rows: u16, composer_rows: u16, focus: Focus, side: Side) -> Areas {
    if size.width < MIN_WIDTH || size.height < MIN_HEIGHT {
        return Areas {
            too_small: true,
            ..Areas::default()
        };
    }
    // Keep at least a few rows for the panes however tall the composer gets.
    let budget = size.height.saturating_sub(6);
    let queue_rows = queue_rows.min(budget / 3);
    let composer_rows = (composer_rows + 1).min(budget.saturating_sub(queue_rows).max(2));
    let [main, queue, composer, status] = Layout::default()
        .direction(Direction::Vertical)
        .constraints([
            Constraint::Min(3),
            Constraint::Length(queue_rows),
            Constraint::Length(composer_rows),
            Constraint::Length(1),
        ])
        .areas(size);
    let mut out = Areas {
        queue,
        composer,
        status,
        ..Areas::default()
    };
    if side == Side::Off {
        out.chat = Some(main);
        return out;
    }
    if side == Side::Tabs {
        let [tabs, pane] = Layout::default()
            .direction(Direction::Vertical)
            .constraints([Constraint::Length(1), Constraint::Min(1)])
            .areas(main);
        out.tabs = Some(tabs);
        match Tab::of(focus) {
            Tab::Chat => out.chat = Some(pane),
            Tab::Tools => out.tree = Some(pane),
            Tab::Dashboard => out.dashboard = Some(pane),
        }
        return out;
    }
    let [left, right] = Layout::default()
        .direction(Direction::Horizontal)
        .constraints([Constraint::Percentage(60), Constraint::Percentage(40)])
        .areas(main);
    let [tree, dashboard] = Layout::default()
        .direction(Direction::Vertical)
        .constraints([Constraint::Percentage(60), Constraint::Percentage(40)])
        .areas(right);
    out.chat = Some(left);
    out.tree = Some(tree);
    out.dashboard = Some(dashboard);
    out
}

/// The inside of a pane with a border on every side.
pub fn inner(area: Rect) -> Rect {
    Rect {
        x: area.x.saturating_add(1),
        y: area.y.saturating_add(1),
        width: area.width.saturating_sub(2),
        height: area.height.saturating_sub(2),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wide_narrow_and_too_small() {
        let wide = areas(
            Rect::new(0, 0, 120, 40),
            0,
            1,
            Focus::Composer,
            Side::Beside,
        );
        assert!(wide.chat.is_some() && wide.tree.is_some() && wide.dashboard.is_some());
        assert_eq!(wide.chat.unwrap().width, 72);
        assert_eq!(wide.status.y, 39);
        let narrow = areas(Rect::new(0, 0, 80, 24), 2, 3, Focus::Tree, Side::Tabs);
        assert!(narrow.tabs.is_some() && narrow.tree.is_some() && narrow.chat.is_none());
        assert_eq!(narrow.queue.height, 2);
        let off = areas(Rect::new(0, 0, 120, 40), 0, 1, Focus::Composer, Side::Off);
        assert_eq!(off.chat.unwrap().width, 120);
        assert!(off.tabs.is_none() && off.tree.is_none() && off.dashboard.is_none());
        let small = |w, h| areas(Rect::new(0, 0, w, h), 0, 1, Focus::Composer, Side::Off);
        assert!(small(39, 20).too_small);
        assert!(small(80, 9).too_small);
        assert_eq!(Focus::Composer.cycle(false), Focus::Dashboard);
    }

    #[test]
    fn the_panes_show_by_themselves_when_there_is_something_and_room() {
        use PaneMode::*;
        assert_eq!(Auto.side(200, false), Side::Off);
        assert_eq!(Auto.side(200, true), Side::Beside);
        assert_eq!(Auto.side(139, true), Side::Tabs);
        assert_eq!(Auto.side(80, true), Side::Tabs);
        assert_eq!(Shown.side(120, false), Side::Beside);
        assert_eq!(Shown.side(99, false), Side::Tabs);
        assert_eq!(Hidden.side(200, true), Side::Off);
    }
}
