//! The integration tests of the model: runtime metric groups and their spec
//! files, recorded through an SDK meter provider and read back from the
//! SDK's in-memory exporter.

use nemo_lens_test_support as support;

mod groups;
mod groups_warnings;
