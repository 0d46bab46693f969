//! Writers of a run's schedule in other tools' file formats, fed the
//! columns of the result's tables: `perfetto` (the event stream of
//! `Result.to_perfetto`) on `proto` (the protobuf wire format).

pub mod perfetto;
pub mod proto;
