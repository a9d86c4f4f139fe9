//! A call's binary frame written in one pass.
//!
//! [`BinaryClientMessage`]'s calls carry their arguments as bytes (`args: Vec<u8>`): built
//! that way, a call's arguments are encoded into a buffer of their own, which encoding the
//! message then copies into the frame. For a large argument (a batch of rows) that is two
//! buffers the size of the payload and a copy (issue 31 measured a 10,000-row call's encode
//! at 0.17× SpacetimeDB's C# SDK's). [`BinaryClientMessage::call_frame`] writes the same bytes
//! with the arguments encoded straight into the frame; the request id can be set afterwards
//! ([`BinaryClientMessage::set_call_request_id`]), so that a client can encode a call where
//! it is made and number it where it is sent.

use super::BinaryClientMessage;
use crate::call::CallKind;
use wasmod_abi::Encode;

/// Where a call's request id is in its frame: after the message's tag.
const REQUEST_ID: std::ops::Range<usize> = 1..5;

impl<Args> super::ClientMessage<Args> {
    /// The call of `name` of `kind`, with `args` as its arguments.
    pub fn call(kind: CallKind, request_id: u32, name: String, args: Args) -> Self {
        match kind {
            CallKind::Reducer => Self::CallReducer {
                request_id,
                name,
                args,
            },
            CallKind::Procedure => Self::CallProcedure {
                request_id,
                name,
                args,
            },
            CallKind::View => Self::CallView {
                request_id,
                name,
                args,
            },
        }
    }
}

impl BinaryClientMessage {
    /// The frame of a call of `name`, exactly as [`to_bytes`](Self::to_bytes) writes the
    /// message of `kind` with this `request_id` and `args` as its arguments, written in one
    /// buffer: `write_args` appends the arguments' encoding straight into the frame (its
    /// length is filled in after it), and `args_len`, their length if known (`0` if not), sizes
    /// the frame once.
    pub fn call_frame(
        kind: CallKind,
        request_id: u32,
        name: &str,
        args_len: usize,
        write_args: impl FnOnce(&mut Vec<u8>),
    ) -> Vec<u8> {
        let mut frame = Vec::with_capacity(REQUEST_ID.end + name.encoded_len() + 4 + args_len);
        frame.push(kind.message_tag());
        request_id.encode(&mut frame);
        name.encode(&mut frame);
        let length_at = frame.len();
        frame.extend_from_slice(&[0; 4]);
        write_args(&mut frame);
        let written = frame.len() - length_at - 4;
        // Arguments of 4 GiB and more do not fit a message (nor the server's bound).
        let written = u32::try_from(written).unwrap_or(u32::MAX);
        frame[length_at..length_at + 4].copy_from_slice(&written.to_le_bytes());
        frame
    }

    /// The frame of a call of `name` with `args`, encoded straight into it (see
    /// [`call_frame`](Self::call_frame)).
    pub fn call_frame_of<A: Encode + ?Sized>(
        kind: CallKind,
        request_id: u32,
        name: &str,
        args: &A,
    ) -> Vec<u8> {
        Self::call_frame(kind, request_id, name, args.encoded_len(), |out| {
            args.encode(out)
        })
    }

    /// Sets the request id of `frame`, a call's frame as [`call_frame`](Self::call_frame)
    /// writes it; a frame too short to be one is left as it is.
    pub fn set_call_request_id(frame: &mut [u8], request_id: u32) {
        if let Some(at) = frame.get_mut(REQUEST_ID) {
            at.copy_from_slice(&request_id.to_le_bytes());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ws::ClientMessage;
    use wasmod_abi::encoding::to_vec;
    use wasmod_abi::Identity;

    /// The message of `kind` as built with its arguments' bytes.
    fn message(kind: CallKind, request_id: u32, name: &str, args: Vec<u8>) -> BinaryClientMessage {
        ClientMessage::call(kind, request_id, name.to_owned(), args)
    }

    #[test]
    fn a_call_frame_is_the_message_as_to_bytes_writes_it() {
        let rows: Vec<(u64, Identity, String)> = (0..300)
            .map(|id| (id, Identity::from_bytes([7; 32]), format!("row {id}")))
            .collect();
        let args = to_vec(&(&rows,));
        for kind in [CallKind::Reducer, CallKind::Procedure, CallKind::View] {
            let expected = message(kind, 0xdead_beef, "send_batch", args.clone()).to_bytes();
            let raw = BinaryClientMessage::call_frame(kind, 0xdead_beef, "send_batch", 0, |out| {
                out.extend_from_slice(&args)
            });
            assert_eq!(
                raw, expected,
                "{kind:?}: raw arguments, the frame not sized"
            );
            let mut numbered = BinaryClientMessage::call_frame_of(kind, 0, "send_batch", &(&rows,));
            assert_ne!(numbered, expected, "{kind:?}: numbered 0");
            BinaryClientMessage::set_call_request_id(&mut numbered, 0xdead_beef);
            assert_eq!(numbered, expected, "{kind:?}: typed, numbered after");
            assert_eq!(
                BinaryClientMessage::from_bytes(&numbered).expect("a message"),
                message(kind, 0xdead_beef, "send_batch", args.clone())
            );
            let empty = BinaryClientMessage::call_frame(kind, 3, "", 0, |_| {});
            assert_eq!(
                empty,
                message(kind, 3, "", Vec::new()).to_bytes(),
                "{kind:?}"
            );
        }
    }

    #[test]
    fn a_frame_too_short_keeps_its_bytes() {
        let mut frame = vec![0, 1, 2];
        BinaryClientMessage::set_call_request_id(&mut frame, 9);
        assert_eq!(frame, [0, 1, 2]);
    }
}
