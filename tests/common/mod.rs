//! Support code shared by the integration tests (each test file that needs it says `mod common;`).

pub mod chromium;
pub mod kernels;
pub mod record;
pub mod svg;
