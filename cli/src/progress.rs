//! A one-line progress bar on stderr, redrawn in place at most ten times a second.
//!
//! Wall time only decides *when* to draw; it never reaches the simulation, whose results
//! stay a function of the scenario alone.

use opal::simulation::Progress;
use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant};

/// Runs shorter than this never show a bar.
const QUIET_START: Duration = Duration::from_millis(300);
/// Least time between two redraws.
const REDRAW_EVERY: Duration = Duration::from_millis(100);
/// Characters in the bar itself.
const BAR_WIDTH: usize = 24;

/// The bar: drawn only when enabled and stderr is a terminal (so logs and tests stay clean).
pub(crate) struct ProgressBar {
    enabled: bool,
    started: Instant,
    last_draw: Option<Instant>,
    /// Width of the last line drawn, to blank it out.
    drawn: usize,
}

impl ProgressBar {
    /// A bar that draws only when `wanted` and stderr is a terminal.
    pub(crate) fn new(wanted: bool) -> Self {
        Self {
            enabled: wanted && std::io::stderr().is_terminal(),
            started: Instant::now(),
            last_draw: None,
            drawn: 0,
        }
    }

    /// Redraws if the run has been going a while and the last redraw is old enough.
    pub(crate) fn update(&mut self, progress: &Progress) {
        if !self.enabled {
            return;
        }
        let now = Instant::now();
        let elapsed = now - self.started;
        let due = match self.last_draw {
            None => elapsed >= QUIET_START,
            Some(t) => now - t >= REDRAW_EVERY,
        };
        if due {
            let text = line(progress, elapsed);
            let pad = self.drawn.saturating_sub(text.chars().count());
            eprint!("\r{text}{:pad$}", "");
            let _ = std::io::stderr().flush();
            self.drawn = text.chars().count();
            self.last_draw = Some(now);
        }
    }

    /// Blanks the bar out, so the tables print on a clean line.
    pub(crate) fn finish(&mut self) {
        if self.drawn > 0 {
            eprint!("\r{:w$}\r", "", w = self.drawn);
            let _ = std::io::stderr().flush();
            self.drawn = 0;
        }
    }
}

/// One line: `[#########---------------]  38%  t=114.2 s  3812 finished, 3900 issued  4.1M events  2.0 s`.
/// Without a known fraction (no request count, no time bound) the bar is left out.
pub(crate) fn line(p: &Progress, elapsed: Duration) -> String {
    let mut out = String::new();
    if let Some(f) = p.fraction {
        let full = ((f * BAR_WIDTH as f64).floor() as usize).min(BAR_WIDTH);
        out.push_str(&format!(
            "[{}{}] {:>3.0}%  ",
            "#".repeat(full),
            "-".repeat(BAR_WIDTH - full),
            f * 100.0
        ));
    }
    out.push_str(&format!(
        "t={:.1} s  {} finished, {} issued  {} events  {:.1} s",
        p.now,
        p.requests_finished,
        p.requests_issued,
        count(p.events),
        elapsed.as_secs_f64()
    ));
    out
}

/// 1234 → "1234", 45_600 → "45.6k", 4_100_000 → "4.1M".
fn count(n: u64) -> String {
    match n {
        0..=9_999 => n.to_string(),
        10_000..=999_999 => format!("{:.1}k", n as f64 / 1e3),
        _ => format!("{:.1}M", n as f64 / 1e6),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn progress(fraction: Option<f64>) -> Progress {
        Progress {
            now: 114.2,
            fraction,
            requests_issued: 3900,
            requests_finished: 3812,
            events: 4_100_000,
            finished: false,
        }
    }

    #[test]
    fn bar_fills_in_proportion_and_states_the_counts() {
        // 0.38 × 24 = 9.12 → 9 filled cells, 15 empty.
        let l = line(&progress(Some(0.38)), Duration::from_millis(2000));
        assert_eq!(
            l,
            format!(
                "[{}{}]  38%  t=114.2 s  3812 finished, 3900 issued  4.1M events  2.0 s",
                "#".repeat(9),
                "-".repeat(15)
            )
        );
    }

    #[test]
    fn unknown_fraction_shows_no_bar() {
        let l = line(&progress(None), Duration::from_millis(500));
        assert!(l.starts_with("t=114.2 s"), "{l}");
    }
}
