//! Exactly-once calls under faults (filled in next).
