//! Output files being written: every output goes to `NAME.tmp` first and is renamed when it
//! is complete. While one is open it is listed here, so that the command line's Ctrl-C handler
//! can remove what an interrupted command leaves behind — the file under the real name is
//! never touched, and no half-written `NAME.tmp` stays either. Directories a command made for
//! its outputs are listed too, and removed on an interrupt if they are still empty.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

static PENDING: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());
/// Per registration, the directories made for outputs, deepest first.
static NEW_DIRS: Mutex<Vec<Vec<PathBuf>>> = Mutex::new(Vec::new());

/// The file an output named `path` replaces: `path` itself, or for a symbolic link the file
/// it points to (renaming over the link would replace the link). An error for a path that is
/// not a regular file — a device such as `/dev/stdout`, a FIFO, a socket — which a rename
/// would replace with a file (as root, even `/dev/stdout`) instead of writing to it.
pub fn output_file(path: &Path) -> std::io::Result<PathBuf> {
    let mut resolved = path.to_path_buf();
    // (A chain of links, followed as the system would; a dangling link's target is created.)
    for _ in 0..40 {
        match std::fs::symlink_metadata(&resolved) {
            Ok(m) if m.file_type().is_symlink() => {
                let target = std::fs::read_link(&resolved)?;
                resolved = match resolved.parent() {
                    Some(dir) => dir.join(target),
                    None => target,
                };
            }
            Ok(m) if !m.is_file() && !m.is_dir() => {
                return Err(std::io::Error::other(format!(
                    "{} is not a regular file (a device, FIFO or socket): outputs are written \
                     to a temporary file and renamed into place; give a file name",
                    path.display()
                )));
            }
            _ => return Ok(resolved),
        }
    }
    Err(std::io::Error::other(format!(
        "{}: too many levels of symbolic links",
        path.display()
    )))
}

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

/// `dirs` (deepest first) were made for this command's outputs; while the returned guard
/// lives, an interrupt removes those of them still empty.
pub fn register_dirs(dirs: &[PathBuf]) -> PendingDirs {
    if let Ok(mut list) = NEW_DIRS.lock() {
        list.push(dirs.to_vec());
    }
    PendingDirs(dirs.to_vec())
}

/// Removes every output file still being written, then the listed directories left empty
/// (for an interrupt; best effort).
pub fn remove_all() {
    // The handler runs on its own thread, so waiting for a writer's brief hold is fine; a
    // lock poisoned by a panicking writer still holds the list.
    let list = PENDING
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    for path in list.iter() {
        let _ = std::fs::remove_file(path);
    }
    let dirs = NEW_DIRS
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    for made in dirs.iter().rev() {
        remove_empty(made);
    }
}

/// Removes `dirs` (deepest first) up to the first one that is not empty.
pub fn remove_empty(dirs: &[PathBuf]) {
    for dir in dirs {
        // (`remove_dir` refuses a directory that holds anything.)
        if std::fs::remove_dir(dir).is_err() {
            break;
        }
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

/// Unlists its directories when dropped (it does not remove them: see `cli::OutputDir`).
#[must_use = "the directories are listed only while the guard lives"]
pub struct PendingDirs(Vec<PathBuf>);

impl Drop for PendingDirs {
    fn drop(&mut self) {
        if let Ok(mut list) = NEW_DIRS.lock() {
            if let Some(i) = list.iter().rposition(|d| *d == self.0) {
                list.swap_remove(i);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `remove_all` acts on every registration in the process: the tests take turns.
    static SERIAL: Mutex<()> = Mutex::new(());

    #[test]
    fn listed_files_are_removed_and_unlisted_ones_kept() {
        let _turn = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
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

    #[test]
    fn an_interrupt_removes_the_output_directories_left_empty() {
        let _turn = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
        let base = std::env::temp_dir().join(format!("ws-pending-dirs-{}", std::process::id()));
        let (empty, deeper, kept) = (
            base.join("empty"),
            base.join("empty/deeper"),
            base.join("kept"),
        );
        std::fs::create_dir_all(&deeper).unwrap();
        std::fs::create_dir_all(&kept).unwrap();
        std::fs::write(kept.join("report.txt"), "complete").unwrap();
        let unlisted = base.join("unlisted");
        std::fs::create_dir_all(&unlisted).unwrap();
        let _made = register_dirs(&[deeper.clone(), empty.clone()]);
        let _with_output = register_dirs(std::slice::from_ref(&kept));
        drop(register_dirs(std::slice::from_ref(&unlisted)));
        remove_all();
        assert!(
            !empty.exists(),
            "an empty output directory and its new parent go"
        );
        assert!(
            kept.join("report.txt").exists(),
            "a directory with outputs stays"
        );
        assert!(unlisted.exists(), "a directory no longer listed stays");
        let _ = std::fs::remove_dir_all(&base);
    }
}
