//! PyO3 glue
