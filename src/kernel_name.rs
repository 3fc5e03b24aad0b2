//! Kernel names as people read them. An Accel-Sim trace names a CUDA kernel by its mangled C++
//! symbol (`_Z6vecAddIfEvPT_S1_S1_i`); reports show it demangled, as Nsight Compute does:
//! [`signature`] with its parameters (`vecAdd<float>(float*, float*, float*, int)`) where
//! there is room, [`function`] without them (`vecAdd<float>`) in captions and legends. The
//! mangled name stays what traces store and what selection matches first. A name that is not
//! a mangled symbol (an assembled kernel's `reduce`) reads as it is.

use cpp_demangle::{DemangleOptions, Symbol};
use std::borrow::Cow;

/// The kernel's signature without its return type (always `void`), or `name` itself when it
/// is not a mangled symbol.
pub fn signature(name: &str) -> Cow<'_, str> {
    demangle(name, DemangleOptions::new().no_return_type())
}

/// The kernel's qualified name and template arguments, without parameters: the short name
/// for captions. `name` itself when it is not a mangled symbol.
pub fn function(name: &str) -> Cow<'_, str> {
    demangle(name, DemangleOptions::new().no_params().no_return_type())
}

/// [`function`], cut to at most `max` characters (an ellipsis marks the cut): a chart's
/// caption has room for `vecAdd<float>`, not for a CUTLASS kernel's template arguments.
pub fn function_within(name: &str, max: usize) -> String {
    let f = function(name);
    match f.char_indices().nth(max.saturating_sub(1)) {
        Some((cut, _)) if f.chars().count() > max => format!("{}…", &f[..cut]),
        _ => f.into_owned(),
    }
}

/// Whether `pattern` picks the kernel `name`: a part of its mangled or its demangled name, so
/// that `vecAdd<float>` and `_Z6vecAdd` both find `_Z6vecAddIfEvPT_S1_S1_i`.
pub fn contains(name: &str, pattern: &str) -> bool {
    name.contains(pattern) || signature(name).contains(pattern)
}

/// Which of the launches' kernels `names` (as traces store them, one name a launch) `pattern`
/// picks: those of exactly that name, mangled, demangled ([`signature`]) or as a function
/// name ([`function`]: `loop` is exactly `_Z4loopPdi`), or, if no kernel
/// has exactly that name, those whose name in either spelling contains it ([`contains`]) —
/// `vecAdd` finds `_Z6vecAddIfEvPT_S1_S1_i`. One flag a launch; an error listing the kernels
/// if it picks none. What `analyze --kernel` and `export --kernel` select.
pub fn select(names: &[&str], pattern: &str) -> Result<Vec<bool>, String> {
    let is = |n: &str| n == pattern || signature(n) == pattern || function(n) == pattern;
    let exact = names.iter().any(|n| is(n));
    let picked: Vec<bool> = names
        .iter()
        .map(|n| match exact {
            true => is(n),
            false => contains(n, pattern),
        })
        .collect();
    if !picked.contains(&true) {
        let mut kernels: Vec<_> = names.iter().map(|n| signature(n)).collect();
        kernels.dedup();
        return Err(format!(
            "no launch of kernel `{pattern}` in the trace (its kernels: {})",
            kernels.join(", ")
        ));
    }
    Ok(picked)
}

fn demangle<'a>(name: &'a str, options: DemangleOptions) -> Cow<'a, str> {
    // Only Itanium C++ symbols (what nvcc emits) are demangled: `reduce` would parse as
    // nothing useful, and a name that fails to parse is shown as the trace spells it.
    if !name.starts_with("_Z") {
        return Cow::Borrowed(name);
    }
    match Symbol::new(name).map(|s| s.demangle_with_options(&options)) {
        Ok(Ok(text)) => Cow::Owned(text),
        _ => Cow::Borrowed(name),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The kernel of the shared Pascal trace (`vectoradd-100-32`).
    const VECADD: &str = "_Z6vecAddIfEvPT_S1_S1_i";

    #[test]
    fn mangled_kernels_read_as_nsight_shows_them() {
        assert_eq!(
            signature(VECADD),
            "vecAdd<float>(float*, float*, float*, int)"
        );
        assert_eq!(function(VECADD), "vecAdd<float>");
        assert_eq!(function("_ZN4cuda3ops4gemmEPKfS2_Pfi"), "cuda::ops::gemm");
    }

    #[test]
    fn other_names_read_as_they_are() {
        assert_eq!(signature("reduce"), "reduce");
        assert_eq!(function("matmul_tiled"), "matmul_tiled");
        // Mangled in form, not in fact: shown as spelled, never an error.
        assert_eq!(signature("_Zgarbage"), "_Zgarbage");
        assert_eq!(function("_Z"), "_Z");
    }

    #[test]
    fn long_names_are_cut_with_an_ellipsis() {
        assert_eq!(function_within(VECADD, 13), "vecAdd<float>");
        assert_eq!(function_within(VECADD, 8), "vecAdd<…");
        assert_eq!(function_within("ü".repeat(10).as_str(), 3), "üü…");
    }

    #[test]
    fn select_prefers_an_exact_name_to_a_part() {
        let names = ["reduce", "reduce_warp", VECADD, "reduce"];
        assert_eq!(
            select(&names, "reduce").unwrap(),
            [true, false, false, true]
        );
        assert_eq!(select(&names, "red").unwrap(), [true, true, false, true]);
        assert_eq!(
            select(&names, "vecAdd<float>").unwrap(),
            [false, false, true, false]
        );
        assert_eq!(
            select(&names, "matmul").unwrap_err(),
            "no launch of kernel `matmul` in the trace (its kernels: reduce, reduce_warp, \
             vecAdd<float>(float*, float*, float*, int), reduce)"
        );
    }

    #[test]
    fn selection_matches_either_spelling() {
        assert!(contains(VECADD, "vecAdd<float>"));
        assert!(contains(VECADD, "_Z6vecAdd"));
        assert!(contains(VECADD, "float*, int"));
        assert!(!contains(VECADD, "vecAdd<double>"));
    }
}
