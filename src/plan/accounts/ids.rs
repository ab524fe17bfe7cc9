//! New uids and gids, picked as shadow's `useradd`/`groupadd` (4.13) pick them: a normal
//! id one above the highest in use in [UID_MIN, UID_MAX] (the lowest free one when that
//! is taken up), a system id one below the lowest in use in [SYS_UID_MIN, SYS_UID_MAX]
//! (the highest free one when that runs out); a user's own group takes the uid as its gid
//! when that gid is free.

use super::AccountsError;
use crate::facts::accounts::LoginDefs;

fn pick(
    used: &[u32],
    (min, max): (u32, u32),
    system: bool,
    what: &'static str,
) -> Result<u32, AccountsError> {
    let none = AccountsError::NoFreeId { what, min, max };
    if min > max {
        return Err(none);
    }
    let in_range: Vec<u32> = used
        .iter()
        .copied()
        .filter(|u| (min..=max).contains(u))
        .collect();
    let free = |id: &u32| !used.contains(id);
    if system {
        match in_range.iter().min() {
            None => Ok(max),
            Some(&low) if low > min => Ok(low - 1),
            Some(_) => (min..=max).rev().find(free).ok_or(none),
        }
    } else {
        match in_range.iter().max() {
            None => Ok(min),
            Some(&high) if high < max => Ok(high + 1),
            Some(_) => (min..=max).find(free).ok_or(none),
        }
    }
}

/// A new uid, given the uids in use.
pub(crate) fn new_uid(used: &[u32], defs: &LoginDefs, system: bool) -> Result<u32, AccountsError> {
    let range = if system { defs.sys_uid } else { defs.uid };
    pick(used, range, system, "uid")
}

/// A new gid, given the gids in use; `preferred` (the new user's uid) is taken when it is in
/// the range and free.
pub(crate) fn new_gid(
    used: &[u32],
    defs: &LoginDefs,
    system: bool,
    preferred: Option<u32>,
) -> Result<u32, AccountsError> {
    let range = if system { defs.sys_gid } else { defs.gid };
    if let Some(p) = preferred.filter(|p| (range.0..=range.1).contains(p) && !used.contains(p)) {
        return Ok(p);
    }
    pick(used, range, system, "gid")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_as_useradd_picks_them() {
        let defs = LoginDefs::parse("UID_MIN 1000\nUID_MAX 1003\nSYS_UID_MIN 100\nSYS_UID_MAX 102\nGID_MIN 1000\nGID_MAX 1003\n");
        let table: &[(&[u32], bool, Option<u32>)] = &[
            (&[0, 65534], false, Some(1000)),
            (&[0, 1000, 1001], false, Some(1002)),
            (&[1000, 1002], false, Some(1003)),
            (&[1001, 1003], false, Some(1000)),
            (&[1000, 1001, 1002, 1003], false, None),
            (&[0], true, Some(102)),
            (&[101, 102], true, Some(100)),
            (&[100, 102], true, Some(101)),
            (&[100, 101, 102], true, None),
        ];
        for (used, system, want) in table {
            assert_eq!(
                new_uid(used, &defs, *system).ok(),
                *want,
                "{used:?} {system}"
            );
        }
        assert_eq!(new_gid(&[1000], &defs, false, Some(1002)).ok(), Some(1002));
        assert_eq!(
            new_gid(&[1000, 1002], &defs, false, Some(1002)).ok(),
            Some(1003)
        );
        assert_eq!(new_gid(&[], &defs, false, Some(5)).ok(), Some(1000));
    }
}
