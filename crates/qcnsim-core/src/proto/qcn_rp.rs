//! IEEE 802.1Qau reaction point (RP, rate limiter). See docs/models/qcn.md.
