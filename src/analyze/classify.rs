//! Classification: a raw [`WarpState`] (with its register, barrier, pipe and path) → the name a
//! report shows. [`Taxonomy::Nsight`] maps onto Nsight Compute's warp states (the table in
//! DESIGN.md); [`Taxonomy::Detailed`] keeps what Nsight hides (`scoreboard:R1:long`,
//! `dependency_barrier:B0:long`, `pipe_busy:fma`, ...).

use crate::sim::observer::WarpState;
use crate::sim::scoreboard::DepPath;
use serde::{Deserialize, Serialize};

/// Nsight Compute's warp states, in report order. The one place their names are spelled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NsightState {
    Selected,
    NotSelected,
    LongScoreboard,
    ShortScoreboard,
    Wait,
    Barrier,
    Membar,
    MathPipeThrottle,
    MioThrottle,
    LgThrottle,
    DispatchStall,
    BranchResolving,
    NoInstruction,
    Drain,
    Sleeping,
    /// Exists in Nsight; nothing in the model maps to it.
    Misc,
}

impl NsightState {
    pub const ALL: [NsightState; 16] = [
        NsightState::Selected,
        NsightState::NotSelected,
        NsightState::LongScoreboard,
        NsightState::ShortScoreboard,
        NsightState::Wait,
        NsightState::Barrier,
        NsightState::Membar,
        NsightState::MathPipeThrottle,
        NsightState::MioThrottle,
        NsightState::LgThrottle,
        NsightState::DispatchStall,
        NsightState::BranchResolving,
        NsightState::NoInstruction,
        NsightState::Drain,
        NsightState::Sleeping,
        NsightState::Misc,
    ];

    pub fn name(self) -> &'static str {
        match self {
            NsightState::Selected => "selected",
            NsightState::NotSelected => "not_selected",
            NsightState::LongScoreboard => "long_scoreboard",
            NsightState::ShortScoreboard => "short_scoreboard",
            NsightState::Wait => "wait",
            NsightState::Barrier => "barrier",
            NsightState::Membar => "membar",
            NsightState::MathPipeThrottle => "math_pipe_throttle",
            NsightState::MioThrottle => "mio_throttle",
            NsightState::LgThrottle => "lg_throttle",
            NsightState::DispatchStall => "dispatch_stall",
            NsightState::BranchResolving => "branch_resolving",
            NsightState::NoInstruction => "no_instruction",
            NsightState::Drain => "drain",
            NsightState::Sleeping => "sleeping",
            NsightState::Misc => "misc",
        }
    }

    pub fn from_name(s: &str) -> Option<NsightState> {
        NsightState::ALL.into_iter().find(|n| n.name() == s)
    }

    /// The Nsight state a raw reason shows as.
    pub fn of(state: WarpState) -> NsightState {
        let by_path = |path: DepPath| match path {
            DepPath::Long => NsightState::LongScoreboard,
            DepPath::Short => NsightState::ShortScoreboard,
            DepPath::Fixed => NsightState::Wait,
        };
        match state {
            WarpState::Selected => NsightState::Selected,
            WarpState::NotSelected => NsightState::NotSelected,
            WarpState::Scoreboard { path, .. } | WarpState::DependencyBarrier { path, .. } => {
                by_path(path)
            }
            WarpState::StallCount => NsightState::Wait,
            WarpState::CtaBarrier => NsightState::Barrier,
            WarpState::Membar => NsightState::Membar,
            WarpState::PipeBusy { .. } => NsightState::MathPipeThrottle,
            WarpState::MioThrottle => NsightState::MioThrottle,
            WarpState::LgThrottle => NsightState::LgThrottle,
            WarpState::TableFull => NsightState::DispatchStall,
            WarpState::BranchResolving => NsightState::BranchResolving,
            WarpState::NoInstruction => NsightState::NoInstruction,
            WarpState::Drain => NsightState::Drain,
            WarpState::Sleeping => NsightState::Sleeping,
        }
    }
}

/// How raw reasons are named in an analysis.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Taxonomy {
    /// Nsight Compute's warp states.
    #[default]
    Nsight,
    /// The raw reasons with their detail (register, barrier, pipe, path).
    Detailed,
}

impl Taxonomy {
    pub const ALL: [Taxonomy; 2] = [Taxonomy::Nsight, Taxonomy::Detailed];

    pub fn name(self) -> &'static str {
        match self {
            Taxonomy::Nsight => "nsight",
            Taxonomy::Detailed => "detailed",
        }
    }

    pub fn from_name(s: &str) -> Option<Taxonomy> {
        Taxonomy::ALL.into_iter().find(|t| t.name() == s)
    }

    /// The name `state` is reported under.
    pub fn classify(self, state: WarpState) -> String {
        match self {
            Taxonomy::Nsight => NsightState::of(state).name().to_string(),
            Taxonomy::Detailed => detailed_name(state),
        }
    }

    /// Names that are always present (with zero cycles) in this taxonomy's breakdowns.
    pub fn fixed_names(self) -> Vec<&'static str> {
        match self {
            Taxonomy::Nsight => NsightState::ALL.iter().map(|s| s.name()).collect(),
            Taxonomy::Detailed => vec!["selected", "not_selected"],
        }
    }
}

/// `scoreboard:R1:long`, `dependency_barrier:B0:long`, `pipe_busy:fma`, `table_full`, ...
pub fn detailed_name(state: WarpState) -> String {
    match state {
        WarpState::Selected => "selected".into(),
        WarpState::NotSelected => "not_selected".into(),
        WarpState::Scoreboard { reg, path, .. } => format!("scoreboard:{reg}:{}", path.name()),
        WarpState::DependencyBarrier { barrier, path, .. } => {
            format!("dependency_barrier:B{barrier}:{}", path.name())
        }
        WarpState::StallCount => "stall_count".into(),
        WarpState::CtaBarrier => "cta_barrier".into(),
        WarpState::Membar => "membar".into(),
        WarpState::PipeBusy { pipe } => format!("pipe_busy:{}", pipe.name()),
        WarpState::MioThrottle => "mio_throttle".into(),
        WarpState::LgThrottle => "lg_throttle".into(),
        WarpState::TableFull => "table_full".into(),
        WarpState::BranchResolving => "branch_resolving".into(),
        WarpState::NoInstruction => "no_instruction".into(),
        WarpState::Drain => "drain".into(),
        WarpState::Sleeping => "sleeping".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::isa::Pipe;
    use crate::sim::scoreboard::RegRef;

    #[test]
    fn paths_map_to_scoreboard_flavours() {
        let sb = |path| WarpState::Scoreboard {
            reg: RegRef::Reg(1),
            producer_pc: 0,
            path,
        };
        assert_eq!(NsightState::of(sb(DepPath::Long)).name(), "long_scoreboard");
        assert_eq!(
            NsightState::of(sb(DepPath::Short)).name(),
            "short_scoreboard"
        );
        assert_eq!(NsightState::of(sb(DepPath::Fixed)).name(), "wait");
        let db = WarpState::DependencyBarrier {
            barrier: 0,
            producer_pc: 3,
            path: DepPath::Long,
        };
        assert_eq!(Taxonomy::Nsight.classify(db), "long_scoreboard");
        assert_eq!(
            Taxonomy::Detailed.classify(db),
            "dependency_barrier:B0:long"
        );
        assert_eq!(
            Taxonomy::Detailed.classify(sb(DepPath::Long)),
            "scoreboard:R1:long"
        );
        assert_eq!(
            Taxonomy::Detailed.classify(WarpState::PipeBusy { pipe: Pipe::Fma }),
            "pipe_busy:fma"
        );
        assert_eq!(
            Taxonomy::Nsight.classify(WarpState::TableFull),
            "dispatch_stall"
        );
    }

    #[test]
    fn names_round_trip() {
        for s in NsightState::ALL {
            assert_eq!(NsightState::from_name(s.name()), Some(s));
        }
    }
}
