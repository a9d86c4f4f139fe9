//! The "keynote-2" workload of SpacetimeDB's own benchmarks, as a wasmod module: a table of
//! accounts and a reducer that moves money between two of them.
//!
//! The load generator (`wasmod-loadgen transfer`) seeds the accounts with [`transfers::seed`],
//! calls [`transfers::transfer`] from many connections with account pairs drawn from a Zipf
//! distribution, and checks afterwards that no money appeared or vanished: the balances
//! still sum to what `seed` put in. It is the write path's benchmark: each call reads two rows
//! by primary key and updates both, so that what a committed call costs beyond that is the
//! server's plumbing.

use wasmod::prelude::*;

/// The accounts and the transfers between them.
#[wasmod::module]
pub mod transfers {
    use super::*;

    /// An account: an id and the money in it.
    #[table(public, name = accounts)]
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub struct Account {
        #[primary_key]
        /// The account's number, `0..count` after seeding.
        pub id: u32,
        /// The money in it.
        pub balance: i64,
    }

    /// Opens accounts `first..first + count`, each holding `balance`. Fails, changing nothing,
    /// if any of them exists already, the range passes `u32::MAX`, or the balance is negative.
    /// Many accounts are seeded a range at a time: a replicated deployment takes transactions
    /// of at most 1 MiB (`docs/high-availability.md`, "Limits"), 16 bytes an account.
    #[reducer]
    fn seed(ctx: &ReducerContext, first: u32, count: u32, balance: i64) -> Result<(), String> {
        if balance < 0 {
            return Err("an account cannot start in debt".into());
        }
        let end = first
            .checked_add(count)
            .ok_or("the accounts' numbers pass u32::MAX")?;
        let accounts = ctx.db.accounts();
        for id in first..end {
            if accounts.id().find(id).is_some() {
                return Err(format!("account {id} is seeded already"));
            }
            accounts.insert(Account { id, balance });
        }
        Ok(())
    }

    /// Moves `amount` from account `from` to account `to`. Fails, changing nothing, if the two
    /// are the same account, the amount is not positive, either account does not exist, or
    /// `from` holds less than `amount`.
    #[reducer]
    fn transfer(ctx: &ReducerContext, from: u32, to: u32, amount: i64) -> Result<(), String> {
        if from == to {
            return Err("a transfer needs two accounts".into());
        }
        if amount <= 0 {
            return Err("a transfer moves a positive amount".into());
        }
        let accounts = ctx.db.accounts();
        let ids = accounts.id();
        let source = ids.find(from).ok_or("no such account to take from")?;
        let target = ids.find(to).ok_or("no such account to pay into")?;
        if source.balance < amount {
            return Err("insufficient funds".into());
        }
        ids.update(Account {
            balance: source.balance - amount,
            ..source
        });
        ids.update(Account {
            balance: target.balance + amount,
            ..target
        });
        Ok(())
    }
}
