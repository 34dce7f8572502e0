//! SONAR: the reaction point's ping timer (the QCN transient-response proposals; see
//! docs/models/qcn-transient.md).
//!
//! The ping timer has three states: waiting-to-probe (WP), waiting-for-echo (WE) and
//! short-fuse (SF), plus `Off` before the first congestion message and after the rate limiter
//! is released.
//!
//! ```text
//! Fb < 0 message (CNM):      state = WP; no mark pending; arm now + WP
//! WP timer expires:          mark the next data frame special
//!                            (we_starts = wp_expiry: state = WE, arm now + WE at once)
//! special frame sent:        (we_starts = special_sent: state = WE, arm now + WE)
//! echo received in WE:       state = WP; arm now + WP        (an echo in WP/SF/Off is ignored)
//! WE timer expires:          state = SF; arm now + SF; action ShortFuse (RP jumps to HAI)
//! SF timer expires:          arm now + SF; action HaiTick (one HAI increase of the RP)
//! rate limiter released:     state = Off; cancel
//! ```
//!
//! The machine is sans-IO: it returns a [`TimerCmd`] for the caller's ping timer and an
//! [`SonarAction`] the caller applies to the RP.

use crate::proto::qcn_rp::TimerCmd;
use crate::units::{SimTime, MS};

/// When the waiting-for-echo period starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WeStart {
    /// When the special frame is sent (the WE period then times the frame's round trip).
    SpecialSent,
    /// When the WP timer expires, even if the next data frame leaves later.
    WpExpiry,
}

impl WeStart {
    pub fn name(self) -> &'static str {
        match self {
            WeStart::SpecialSent => "special_sent",
            WeStart::WpExpiry => "wp_expiry",
        }
    }
}

/// SONAR parameters of one RP.
#[derive(Debug, Clone, PartialEq)]
pub struct SonarParams {
    /// Waiting-to-probe period: 10 ms.
    pub wp_ps: SimTime,
    /// Waiting-for-echo period (the caller resolves it per flow: 4 x path RTT, at least 1 ms).
    pub we_ps: SimTime,
    /// Short-fuse period: 5 ms (each expiry is one HAI increase).
    pub sf_ps: SimTime,
    pub we_starts: WeStart,
}

impl SonarParams {
    /// The documented defaults with a given WE period.
    pub fn standard(we_ps: SimTime) -> SonarParams {
        SonarParams {
            wp_ps: 10 * MS,
            we_ps,
            sf_ps: 5 * MS,
            we_starts: WeStart::SpecialSent,
        }
    }
}

/// The ping-timer state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PingState {
    Off,
    WaitingToProbe,
    WaitingForEcho,
    ShortFuse,
}

impl PingState {
    pub fn name(self) -> &'static str {
        match self {
            PingState::Off => "off",
            PingState::WaitingToProbe => "WP",
            PingState::WaitingForEcho => "WE",
            PingState::ShortFuse => "SF",
        }
    }
}

/// What the caller does to the RP after a ping-timer expiry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SonarAction {
    None,
    /// WE expired without an echo: the RP jumps to hyper-active increase.
    ShortFuse,
    /// An SF period expired: one HAI increase of the RP.
    HaiTick,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SonarOutput {
    pub timer: TimerCmd,
    pub action: SonarAction,
}

impl SonarOutput {
    pub const NONE: SonarOutput = SonarOutput {
        timer: TimerCmd::Keep,
        action: SonarAction::None,
    };
}

/// The ping timer of one RP.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sonar {
    state: PingState,
    /// The next data frame sent is marked special.
    mark_next: bool,
    deadline: Option<SimTime>,
}

impl Default for Sonar {
    fn default() -> Self {
        Sonar {
            state: PingState::Off,
            mark_next: false,
            deadline: None,
        }
    }
}

impl Sonar {
    pub fn state(&self) -> PingState {
        self.state
    }

    /// A special-frame mark is pending.
    pub fn mark_pending(&self) -> bool {
        self.mark_next
    }

    pub fn deadline(&self) -> Option<SimTime> {
        self.deadline
    }

    fn set(&mut self, state: PingState, at: Option<SimTime>) -> TimerCmd {
        self.state = state;
        self.deadline = at;
        match at {
            Some(t) => TimerCmd::Arm(t),
            None => TimerCmd::Cancel,
        }
    }

    /// An Fb < 0 message (CNM) reached the RP: back to WP.
    pub fn on_congestion(&mut self, p: &SonarParams, now: SimTime) -> SonarOutput {
        self.mark_next = false;
        SonarOutput {
            timer: self.set(PingState::WaitingToProbe, Some(now + p.wp_ps)),
            action: SonarAction::None,
        }
    }

    /// The ping timer armed last fired at `now` (the caller drops stale events).
    pub fn on_timer(&mut self, p: &SonarParams, now: SimTime) -> SonarOutput {
        if self.deadline.is_none_or(|d| d > now) {
            return SonarOutput::NONE;
        }
        match self.state {
            PingState::Off => SonarOutput::NONE,
            PingState::WaitingToProbe => {
                self.mark_next = true;
                match p.we_starts {
                    // The timer already fired: it stays idle until the special frame leaves.
                    WeStart::SpecialSent => {
                        self.deadline = None;
                        SonarOutput::NONE
                    }
                    WeStart::WpExpiry => SonarOutput {
                        timer: self.set(PingState::WaitingForEcho, Some(now + p.we_ps)),
                        action: SonarAction::None,
                    },
                }
            }
            PingState::WaitingForEcho => {
                self.mark_next = false;
                SonarOutput {
                    timer: self.set(PingState::ShortFuse, Some(now + p.sf_ps)),
                    action: SonarAction::ShortFuse,
                }
            }
            PingState::ShortFuse => SonarOutput {
                timer: self.set(PingState::ShortFuse, Some(now + p.sf_ps)),
                action: SonarAction::HaiTick,
            },
        }
    }

    /// A data frame leaves the rate limiter. Returns whether it is marked special (and, with
    /// `we_starts = special_sent`, the WE timer to arm).
    #[inline]
    pub fn on_data_sent(&mut self, p: &SonarParams, now: SimTime) -> (bool, TimerCmd) {
        if !self.mark_next {
            return (false, TimerCmd::Keep);
        }
        self.mark_next = false;
        match p.we_starts {
            WeStart::SpecialSent => (
                true,
                self.set(PingState::WaitingForEcho, Some(now + p.we_ps)),
            ),
            WeStart::WpExpiry => (true, TimerCmd::Keep),
        }
    }

    /// An echo reached the RP. Returns whether it was accepted (state WE); other echoes are
    /// late or unsolicited and ignored.
    pub fn on_echo(&mut self, p: &SonarParams, now: SimTime) -> (bool, SonarOutput) {
        if self.state != PingState::WaitingForEcho {
            return (false, SonarOutput::NONE);
        }
        self.mark_next = false;
        let timer = self.set(PingState::WaitingToProbe, Some(now + p.wp_ps));
        (
            true,
            SonarOutput {
                timer,
                action: SonarAction::None,
            },
        )
    }

    /// The rate limiter was released (or is inactive): SONAR stops.
    pub fn stop(&mut self) -> TimerCmd {
        self.mark_next = false;
        self.set(PingState::Off, None)
    }
}

#[cfg(test)]
// Each rule is a table of wide (state before, input, state after) tuples, by design.
#[allow(clippy::type_complexity)]
mod tests {
    use super::*;

    const NOW: SimTime = 50 * MS;
    const WE: SimTime = 2 * MS;

    use PingState::*;

    fn sp() -> SonarParams {
        SonarParams::standard(WE)
    }
    fn wpx() -> SonarParams {
        SonarParams {
            we_starts: WeStart::WpExpiry,
            ..sp()
        }
    }

    fn at(state: PingState, mark: bool, deadline: Option<SimTime>) -> Sonar {
        Sonar {
            state,
            mark_next: mark,
            deadline,
        }
    }

    #[derive(Debug, Clone, Copy)]
    enum In {
        Cnm,
        Timer,
        Sent,
        Echo,
        Stop,
    }

    /// Apply an input; returns (timer command, action, special mark, echo accepted).
    fn apply(s: &mut Sonar, p: &SonarParams, input: In) -> (TimerCmd, SonarAction, bool, bool) {
        match input {
            In::Cnm => {
                let o = s.on_congestion(p, NOW);
                (o.timer, o.action, false, false)
            }
            In::Timer => {
                let o = s.on_timer(p, NOW);
                (o.timer, o.action, false, false)
            }
            In::Sent => {
                let (m, t) = s.on_data_sent(p, NOW);
                (t, SonarAction::None, m, false)
            }
            In::Echo => {
                let (ok, o) = s.on_echo(p, NOW);
                (o.timer, o.action, false, ok)
            }
            In::Stop => (s.stop(), SonarAction::None, false, false),
        }
    }

    #[test]
    fn defaults() {
        let p = sp();
        assert_eq!((p.wp_ps, p.sf_ps, p.we_ps), (10 * MS, 5 * MS, WE));
        assert_eq!(p.we_starts, WeStart::SpecialSent);
        assert_eq!(Sonar::default().state(), Off);
    }

    #[test]
    fn state_transitions() {
        let (s_, w_) = (sp(), wpx());
        let due = Some(NOW);
        let (wp, we, sf) = (NOW + 10 * MS, NOW + WE, NOW + 5 * MS);
        use SonarAction::{HaiTick, None as Nop, ShortFuse as Fuse};
        use TimerCmd::{Arm, Cancel, Keep};
        // (name, params, state before, input, state after, command, action, special, echo ok)
        #[rustfmt::skip]
        let cases: &[(&str, &SonarParams, Sonar, In, Sonar, TimerCmd, SonarAction, bool, bool)] = &[
            ("Off: CNM enters WP", &s_, at(Off, false, None), In::Cnm, at(WaitingToProbe, false, Some(wp)), Arm(wp), Nop, false, false),
            ("WP: CNM restarts WP", &s_, at(WaitingToProbe, false, Some(NOW + 1)), In::Cnm, at(WaitingToProbe, false, Some(wp)), Arm(wp), Nop, false, false),
            ("WP mark pending: CNM clears the mark", &s_, at(WaitingToProbe, true, None), In::Cnm, at(WaitingToProbe, false, Some(wp)), Arm(wp), Nop, false, false),
            ("WE: CNM back to WP", &s_, at(WaitingForEcho, false, Some(NOW + 1)), In::Cnm, at(WaitingToProbe, false, Some(wp)), Arm(wp), Nop, false, false),
            ("SF: CNM back to WP", &s_, at(ShortFuse, false, Some(NOW + 1)), In::Cnm, at(WaitingToProbe, false, Some(wp)), Arm(wp), Nop, false, false),
            ("WP expiry: mark the next frame", &s_, at(WaitingToProbe, false, due), In::Timer, at(WaitingToProbe, true, None), Keep, Nop, false, false),
            ("WP expiry (wp_expiry): WE at once", &w_, at(WaitingToProbe, false, due), In::Timer, at(WaitingForEcho, true, Some(we)), Arm(we), Nop, false, false),
            ("mark pending: frame is special, WE starts", &s_, at(WaitingToProbe, true, None), In::Sent, at(WaitingForEcho, false, Some(we)), Arm(we), Nop, true, false),
            ("mark pending (wp_expiry): special, WE running", &w_, at(WaitingForEcho, true, Some(we)), In::Sent, at(WaitingForEcho, false, Some(we)), Keep, Nop, true, false),
            ("no mark: frame is ordinary", &s_, at(WaitingToProbe, false, Some(wp)), In::Sent, at(WaitingToProbe, false, Some(wp)), Keep, Nop, false, false),
            ("WE: frame after the special one is ordinary", &s_, at(WaitingForEcho, false, Some(we)), In::Sent, at(WaitingForEcho, false, Some(we)), Keep, Nop, false, false),
            ("WE: echo back to WP", &s_, at(WaitingForEcho, false, Some(we)), In::Echo, at(WaitingToProbe, false, Some(wp)), Arm(wp), Nop, false, true),
            ("WE (wp_expiry) echo before the frame left: WP", &w_, at(WaitingForEcho, true, Some(we)), In::Echo, at(WaitingToProbe, false, Some(wp)), Arm(wp), Nop, false, true),
            ("WP: echo ignored", &s_, at(WaitingToProbe, false, Some(wp)), In::Echo, at(WaitingToProbe, false, Some(wp)), Keep, Nop, false, false),
            ("SF: late echo ignored", &s_, at(ShortFuse, false, Some(sf)), In::Echo, at(ShortFuse, false, Some(sf)), Keep, Nop, false, false),
            ("Off: echo ignored", &s_, at(Off, false, None), In::Echo, at(Off, false, None), Keep, Nop, false, false),
            ("WE expiry: short fuse", &s_, at(WaitingForEcho, false, due), In::Timer, at(ShortFuse, false, Some(sf)), Arm(sf), Fuse, false, false),
            ("WE expiry with a mark still pending: short fuse", &w_, at(WaitingForEcho, true, due), In::Timer, at(ShortFuse, false, Some(sf)), Arm(sf), Fuse, false, false),
            ("SF expiry: HAI tick, re-armed", &s_, at(ShortFuse, false, due), In::Timer, at(ShortFuse, false, Some(sf)), Arm(sf), HaiTick, false, false),
            ("stale (early) event: nothing", &s_, at(WaitingForEcho, false, Some(NOW + 1)), In::Timer, at(WaitingForEcho, false, Some(NOW + 1)), Keep, Nop, false, false),
            ("cancelled timer: nothing", &s_, at(WaitingToProbe, true, None), In::Timer, at(WaitingToProbe, true, None), Keep, Nop, false, false),
            ("Off: timer nothing", &s_, at(Off, false, due), In::Timer, at(Off, false, due), Keep, Nop, false, false),
            ("stop from SF", &s_, at(ShortFuse, false, Some(sf)), In::Stop, at(Off, false, None), Cancel, Nop, false, false),
            ("stop clears a pending mark", &s_, at(WaitingToProbe, true, None), In::Stop, at(Off, false, None), Cancel, Nop, false, false),
        ];
        for (name, p, before, input, after, cmd, action, special, ok) in cases {
            let mut s = before.clone();
            let got = apply(&mut s, p, *input);
            assert_eq!(got, (*cmd, *action, *special, *ok), "{name}");
            assert_eq!(s, *after, "{name}");
        }
    }

    #[test]
    fn full_cycle_probe_echo_then_probe_timeout() {
        let p = sp();
        let mut s = Sonar::default();
        let mut t = 0;
        assert_eq!(s.on_congestion(&p, t).timer, TimerCmd::Arm(10 * MS));
        t = 10 * MS;
        assert_eq!(s.on_timer(&p, t), SonarOutput::NONE);
        // the next frame leaves 1 ms later: special, WE runs from then
        t += MS;
        assert_eq!(s.on_data_sent(&p, t), (true, TimerCmd::Arm(t + WE)));
        let (ok, o) = s.on_echo(&p, t + MS);
        assert!(ok);
        assert_eq!(o.timer, TimerCmd::Arm(t + MS + 10 * MS));
        t += MS + 10 * MS;
        s.on_timer(&p, t);
        assert!(s.on_data_sent(&p, t).0);
        // no echo: short fuse, then HAI ticks every SF
        let o = s.on_timer(&p, t + WE);
        assert_eq!(o.action, SonarAction::ShortFuse);
        assert_eq!(s.state(), ShortFuse);
        let o = s.on_timer(&p, t + WE + 5 * MS);
        assert_eq!(o.action, SonarAction::HaiTick);
        assert_eq!(o.timer, TimerCmd::Arm(t + WE + 10 * MS));
    }
}
