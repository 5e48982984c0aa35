//! Throwaway redis-server processes for tests and examples.
