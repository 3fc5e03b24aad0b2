//! Traces as comparisons, reports and charts name them (what sets each run apart beside the
//! name is `analyze::caption`'s). A trace is named by its file name,
//! unless another trace of the same comparison has that file name too — `sweep` names every
//! trace `POLICY.SCOREBOARD.wstrace`, so the traces of two sweeps always do — and then by the
//! shortest end of its path that no other trace's path ends with (`sv/gto.bitmap.wstrace`
//! beside `sh/gto.bitmap.wstrace`). `compare`'s tables, the report's headings and the stalls
//! chart's groups all take their names from [`labels`], so one trace reads the same in each.

use std::path::{Component, Path, PathBuf};

/// The names of `paths`, in their order: each the fewest trailing components of its path
/// that end no other of the paths (the file name, when that is unique). A path given twice
/// cannot be told from itself and is named by its file name both times; a path that is the
/// end of another (`gto.wstrace` beside `old/gto.wstrace`) is named whole.
pub fn labels<P: AsRef<Path>>(paths: &[P]) -> Vec<String> {
    let components: Vec<Vec<Component>> = paths
        .iter()
        .map(|p| p.as_ref().components().collect())
        .collect();
    paths
        .iter()
        .zip(&components)
        .map(|(path, own)| {
            let others: Vec<&Vec<Component>> =
                components.iter().filter(|other| *other != own).collect();
            let ends_another = |k: usize| {
                others
                    .iter()
                    .any(|o| o.len() >= k && o[o.len() - k..] == own[own.len() - k..])
            };
            let k = (1..=own.len())
                .find(|&k| !ends_another(k))
                .unwrap_or(own.len());
            if k == 0 {
                return path.as_ref().display().to_string();
            }
            own[own.len() - k..]
                .iter()
                .collect::<PathBuf>()
                .display()
                .to_string()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::labels;

    #[test]
    fn distinct_file_names_are_the_labels() {
        assert_eq!(
            labels(&[
                "traces/reduce.small.gto.wstrace",
                "/tmp/x/reduce.small.lrr.wstrace"
            ]),
            ["reduce.small.gto.wstrace", "reduce.small.lrr.wstrace"]
        );
    }

    #[test]
    fn shared_file_names_keep_as_many_directories_as_tell_them_apart() {
        assert_eq!(
            labels(&[
                "sv/gto.bitmap.wstrace",
                "sh/gto.bitmap.wstrace",
                "sv/lrr.bitmap.wstrace"
            ]),
            [
                "sv/gto.bitmap.wstrace",
                "sh/gto.bitmap.wstrace",
                "lrr.bitmap.wstrace"
            ]
        );
        assert_eq!(
            labels(&["/runs/a/volta/gto.wstrace", "/runs/b/volta/gto.wstrace"]),
            ["a/volta/gto.wstrace", "b/volta/gto.wstrace"]
        );
    }

    #[test]
    fn a_path_that_ends_another_is_named_whole() {
        let l = labels(&["gto.wstrace", "old/gto.wstrace", "/gto.wstrace"]);
        assert_eq!(l, ["gto.wstrace", "old/gto.wstrace", "/gto.wstrace"]);
    }

    #[test]
    fn the_same_path_twice_is_named_alike() {
        assert_eq!(
            labels(&["a/t.wstrace", "a/t.wstrace"]),
            ["t.wstrace", "t.wstrace"]
        );
    }
}
