//! Output files being written: every output goes to `NAME.tmp` first and is renamed when it
//! is complete. While one is open it is listed here, so that the command line's Ctrl-C handler
//! can remove what an interrupted command leaves behind — the file under the real name is
//! never touched, and no half-written `NAME.tmp` stays either.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

static PENDING: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// Where the output `path` is written until it is complete: `PATH.tmp`.
pub fn tmp_path(path: &Path) -> PathBuf {
    let mut s = path.as_os_str().to_os_string();
    s.push(".tmp");
    PathBuf::from(s)
}

/// `tmp` is being written; it stays listed until the returned guard is dropped (after the
/// rename, or after a failed write removed it).
pub fn register(tmp: &Path) -> Pending {
    if let Ok(mut list) = PENDING.lock() {
        list.push(tmp.to_path_buf());
    }
    Pending(tmp.to_path_buf())
}

/// Removes every output file still being written (for an interrupt; best effort).
pub fn remove_all() {
    // The handler runs on its own thread, so waiting for a writer's brief hold is fine; a
    // lock poisoned by a panicking writer still holds the list.
    let list = match PENDING.lock() {
        Ok(list) => list,
        Err(poisoned) => poisoned.into_inner(),
    };
    for path in list.iter() {
        let _ = std::fs::remove_file(path);
    }
}

/// Unlists its file when dropped.
#[must_use = "the file is listed only while the guard lives"]
pub struct Pending(PathBuf);

impl Drop for Pending {
    fn drop(&mut self) {
        if let Ok(mut list) = PENDING.lock() {
            if let Some(i) = list.iter().rposition(|p| *p == self.0) {
                list.swap_remove(i);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listed_files_are_removed_and_unlisted_ones_kept() {
        let dir = std::env::temp_dir().join(format!("ws-pending-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (a, b) = (dir.join("a.tmp"), dir.join("b.tmp"));
        std::fs::write(&a, "a").unwrap();
        std::fs::write(&b, "b").unwrap();
        let _listed = register(&a);
        drop(register(&b));
        remove_all();
        assert!(!a.exists());
        assert!(b.exists());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
