//! PCM, the permanent customer model (Fu et al., seed 001 §2.1): "a new RU is introduced at
//! the tail of the request queue, as soon as the processing of the previous RU is completed",
//! at the same priority as user requests, served FCFS with them.

use super::Discipline;
use crate::disk::Priority;
use crate::rebuild::RebuildConfig;

pub const DOC: &str = "permanent customer: the next rebuild read joins the user queue at user priority as soon as the last one ends";

/// The permanent customer model.
pub struct Pcm;

impl Pcm {
    pub fn boxed(_: &RebuildConfig, _: u32) -> Box<dyn Discipline> {
        Box::new(Pcm)
    }
}

impl Discipline for Pcm {
    fn priority(&self) -> Priority {
        Priority::Foreground
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pcm_reads_queue_with_user_requests_at_once() {
        assert_eq!(Pcm.priority(), Priority::Foreground);
        assert_eq!(Pcm.ready_at(3, 11), 11);
    }
}
