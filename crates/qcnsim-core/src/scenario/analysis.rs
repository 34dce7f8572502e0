//! `[analysis]`: what the run's summary analyses (the bottleneck port, the recovery and
//! downward transient times, the statistics window, the victim flows).

use super::links::port_ref;
use super::reader::{Res, TableReader};
use super::{AnalysisSpec, Scenario};
use crate::units;
use serde_json::{Map, Value as Json};

/// `[analysis]`, into `sc.analysis` (`[[schedule]]` is read before: its first port is the
/// default bottleneck).
pub(super) fn read(
    sc: &mut Scenario,
    r: &mut TableReader,
    resolved: &mut Map<String, Json>,
) -> Res<()> {
    let duration = sc.duration;
    let mut a = r.sub("analysis")?;
    let bottleneck = match a.opt_str("bottleneck")? {
        Some(n) => Some(port_ref(sc, &a, "bottleneck", &n)?),
        None => sc.schedule.first().map(|s| s.port),
    };
    if let Some(b) = bottleneck {
        a.put("bottleneck", Json::String(sc.port_name(b)));
    }
    let recovery_fraction = a.f64_in("recovery_fraction", 0.9, 0.01, 1.0)?;
    let stats_from = a.time_or("stats_from", 0)?;
    let stats_to = a.time_or("stats_to", duration)?;
    if stats_to > duration {
        return Err(a.err(
            "stats_to",
            format!("{:?}", units::fmt_time(stats_to)),
            format!(
                "a time up to meta.duration = {} (the default is the end of the run)",
                units::fmt_time(duration)
            ),
        ));
    }
    if stats_from >= stats_to {
        return Err(a.err(
            "stats_from",
            format!("{:?}", units::fmt_time(stats_from)),
            format!(
                "a time before the end of the statistics window, {}",
                units::fmt_time(stats_to)
            ),
        ));
    }
    let downward_factor = a.opt_f64("downward_factor")?;
    if let Some(f) = downward_factor {
        if !(1.0..=1000.0).contains(&f) {
            return Err(a.err(
                "downward_factor",
                format!("{f}"),
                "a number from 1 to 1000 (multiple of the reduced capacity)",
            ));
        }
    }
    let victims = a.bool_or("victims", false)?;
    let fct_unfinished_bound =
        a.choice("fct_unfinished", "exclude", &["exclude", "lower_bound"])? == "lower_bound";
    if victims && bottleneck.is_none() {
        return Err(a.err(
            "victims",
            "true",
            "false, or name analysis.bottleneck (victims are the flows that do not cross it)",
        ));
    }
    sc.analysis = AnalysisSpec {
        bottleneck,
        recovery_fraction,
        stats_from,
        stats_to,
        downward_factor,
        victims,
        fct_unfinished_bound,
    };
    resolved.insert("analysis".into(), Json::Object(a.finish()?));
    Ok(())
}
