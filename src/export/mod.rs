//! Exports of a trace to other tools' formats. Readers of the trace only, like the analyzer.

pub mod perfetto;
