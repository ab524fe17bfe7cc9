//! What a document asks of the root's facts: the request ([`Wanted`]) its modules make,
//! as their rows in the module table say (`programs`, `wants`).

use crate::cloud_config::modules::TABLE;
use crate::cloud_config::CloudConfig;
use crate::facts::Wanted;

/// The facts the modules of `cfg` need: the distribution, the account files and whether
/// `/etc/hostname` exists (every document's), and what each module's row asks for.
pub fn wanted(cfg: &CloudConfig) -> Wanted {
    let mut w = Wanted {
        os: true,
        account_files: true,
        hostname_file: true,
        ..Wanted::default()
    };
    for m in TABLE {
        w.programs
            .extend((m.programs)(cfg).iter().map(|p| p.to_string()));
        (m.wants)(cfg, &mut w);
    }
    w
}
