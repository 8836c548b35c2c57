//! Talk-mode playback of simulated time.

/// Talk-mode playback speeds, in simulated seconds per wall-clock second.
pub const TALK_SPEEDS: [f64; 9] = [0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0];

/// Talk-mode playback of simulated time.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TalkState {
    /// Whether playback advances.
    pub playing: bool,
    /// Simulated seconds per wall-clock second; one of [`TALK_SPEEDS`].
    pub speed: f64,
    /// Simulated time shown, seconds.
    pub position_s: f64,
    /// Start playing when the run under way finishes (talk mode was entered before it had).
    pub play_when_finished: bool,
}

impl Default for TalkState {
    fn default() -> Self {
        Self {
            playing: false,
            speed: 1.0,
            position_s: 0.0,
            play_when_finished: false,
        }
    }
}

/// The speed `steps` places along [`TALK_SPEEDS`] from `speed`, stopping at either end.
pub(super) fn step_speed(speed: f64, steps: isize) -> f64 {
    let here = TALK_SPEEDS
        .iter()
        .position(|&s| s >= speed)
        .unwrap_or(TALK_SPEEDS.len() - 1) as isize;
    let to = (here + steps).clamp(0, TALK_SPEEDS.len() as isize - 1);
    TALK_SPEEDS[to as usize]
}
