//! The account pairs of the transfer workload: ranks drawn from a Zipf distribution, as
//! SpacetimeDB's keynote-2 draws them (α = 0 is uniform, α = 1.5 sends most transfers to a
//! few hot accounts), with a small seeded generator so that a run is repeatable.

use std::sync::Arc;

/// A Zipf distribution over `0..n`: value `k` has weight `1 / (k + 1)^α`. Sampled by
/// inverting its cumulative distribution (a binary search in a table of `n` sums, shared by
/// every sampler of a run).
#[derive(Clone, Debug)]
pub struct Zipf {
    cumulative: Arc<[f64]>,
}

impl Zipf {
    /// The distribution over `0..n` with exponent `alpha` (`n` at least 1, `alpha` at least 0).
    pub fn new(n: u32, alpha: f64) -> Self {
        let mut sum = 0.0;
        let cumulative = (1..=n.max(1))
            .map(|rank| {
                sum += f64::from(rank).powf(-alpha.max(0.0));
                sum
            })
            .collect();
        Self { cumulative }
    }

    /// A value drawn with `random`.
    pub fn sample(&self, random: &mut Random) -> u32 {
        let total = self.cumulative.last().copied().unwrap_or(0.0);
        let point = random.unit() * total;
        let index = self.cumulative.partition_point(|&sum| sum <= point);
        index.min(self.cumulative.len() - 1) as u32
    }

    /// Two different values, both drawn again until they differ, or `None` when there is only
    /// one value. Drawing both again keeps the pair symmetric: a value is as likely first as
    /// second (drawing only the second again would make the hottest value more often the
    /// first, and a transfer's source: its balance would drain).
    pub fn pair(&self, random: &mut Random) -> Option<(u32, u32)> {
        if self.cumulative.len() < 2 {
            return None;
        }
        loop {
            let (from, to) = (self.sample(random), self.sample(random));
            if from != to {
                return Some((from, to));
            }
        }
    }
}

/// SplitMix64: a fast generator of good enough quality for drawing load, seeded per caller.
#[derive(Clone, Debug)]
pub struct Random(u64);

impl Random {
    /// The generator seeded with `seed`.
    pub fn new(seed: u64) -> Self {
        Self(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number in `[0, 1)`.
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn histogram(zipf: &Zipf, n: usize, draws: usize) -> Vec<usize> {
        let mut random = Random::new(7);
        let mut counts = vec![0; n];
        for _ in 0..draws {
            counts[zipf.sample(&mut random) as usize] += 1;
        }
        counts
    }

    #[test]
    fn alpha_zero_is_uniform() {
        let counts = histogram(&Zipf::new(10, 0.0), 10, 100_000);
        for count in counts {
            assert!((9_000..11_000).contains(&count), "{count}");
        }
    }

    #[test]
    fn a_high_alpha_favours_the_first_values_by_their_weights() {
        let counts = histogram(&Zipf::new(1000, 1.5), 1000, 200_000);
        // Weights 1 and 2^-1.5: the first value is drawn about 2.83 times as often as the
        // second, and the first ten take most draws.
        let ratio = counts[0] as f64 / counts[1] as f64;
        assert!((2.6..3.1).contains(&ratio), "{ratio}");
        let first_ten: usize = counts[..10].iter().sum();
        assert!(first_ten > 200_000 * 7 / 10, "{first_ten}");
        assert!(counts[999] < counts[0] / 1000);
    }

    #[test]
    fn a_value_is_as_likely_first_as_second() {
        let zipf = Zipf::new(100, 1.5);
        let mut random = Random::new(3);
        let (mut first, mut second) = (0i64, 0i64);
        for _ in 0..200_000 {
            let (from, to) = zipf.pair(&mut random).expect("a hundred values");
            first += i64::from(from == 0);
            second += i64::from(to == 0);
        }
        // About 56,000 each; a one-sided redraw made them about 76,000 and 50,000.
        assert!((first - second).abs() < 2_000, "{first} {second}");
    }

    #[test]
    fn pairs_are_two_different_accounts_in_range() {
        let zipf = Zipf::new(3, 1.5);
        let mut random = Random::new(1);
        for _ in 0..1000 {
            let (from, to) = zipf.pair(&mut random).expect("three values");
            assert!(from != to && from < 3 && to < 3);
        }
        assert_eq!(Zipf::new(1, 0.0).pair(&mut random), None);
    }
}
