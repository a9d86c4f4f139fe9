//! The imports of `docs/abi.md`, module `wasmod_v1`, as wasmtime host functions.
//!
//! Each import reads its pointers and lengths against the module's exported `memory` through
//! [`GuestMemory`] (every one is bounds-checked, out-pointers included, and all of them before
//! the import acts), calls the [`InstanceEnv`] method of the same name, and writes the results
//! back. The semantics are the environment's; this file only moves bytes. An import never
//! fails the call: a bad pointer is the error code `OUT_OF_BOUNDS`, and `console_log` drops a
//! line it cannot read. The one exception is the deadline: a scan that stopped because the
//! call's deadline passed traps as wasm code past its deadline does ([`interrupted`]), so
//! that the call ends `deadline exceeded` however long its scans are.
//!
//! The linker is the one list of the host's imports: loading a module checks the module's
//! imports against it (see [`super::validate`]).

use super::memory::GuestMemory;
use super::store::StoreData;
use crate::env::{Advance, InstanceEnv, LogLevel};
use wasmod_abi::names::{EXHAUSTED, IMPORT_MODULE};
use wasmod_abi::{Errno, Timestamp};
use wasmtime::{Engine, Extern, Linker};

type Caller<'a> = wasmtime::Caller<'a, StoreData>;

/// A linker with every import of the ABI defined.
pub(crate) fn linker(engine: &Engine) -> wasmtime::Result<Linker<StoreData>> {
    let mut linker = Linker::new(engine);
    let m = IMPORT_MODULE;

    linker.func_wrap(
        m,
        "bytes_source_remaining",
        |mut caller: Caller<'_>, source: u32, out: u32| {
            with_memory(&mut caller, |memory, env| {
                let out = memory.out::<4>(out)?;
                let remaining = env.bytes_source_remaining(source)?;
                memory.write(out, remaining.to_le_bytes());
                Ok(0)
            })
        },
    )?;
    linker.func_wrap(
        m,
        "bytes_source_read",
        |mut caller: Caller<'_>, source: u32, buf: u32, buf_len: u32| {
            with_memory(&mut caller, |memory, env| {
                let buf_len = memory.out::<4>(buf_len)?;
                let buf = memory.range(buf, memory.read_u32(buf_len))?;
                let (read, exhausted) = env.bytes_source_read(source, memory.slice_mut(buf))?;
                memory.write(buf_len, len32(read).to_le_bytes());
                Ok(if exhausted { EXHAUSTED.into() } else { 0 })
            })
        },
    )?;
    linker.func_wrap(
        m,
        "bytes_sink_write",
        |mut caller: Caller<'_>, sink: u32, buf: u32, buf_len: u32| {
            with_memory(&mut caller, |memory, env| {
                let buf_len = memory.out::<4>(buf_len)?;
                let len = memory.read_u32(buf_len);
                let written = env.bytes_sink_write(sink, memory.slice(buf, len)?);
                let accepted = if written.is_ok() { len } else { 0 };
                memory.write(buf_len, accepted.to_le_bytes());
                written.map(|()| 0)
            })
        },
    )?;

    linker.func_wrap(
        m,
        "caller_claims",
        |mut caller: Caller<'_>, out_source: u32| {
            with_memory(&mut caller, |memory, env| {
                let out = memory.out::<4>(out_source)?;
                memory.write(out, env.caller_claims()?.to_le_bytes());
                Ok(0)
            })
        },
    )?;

    linker.func_wrap(
        m,
        "table_row_count",
        |mut caller: Caller<'_>, table: u32, out: u32| {
            with_memory(&mut caller, |memory, env| {
                let out = memory.out::<8>(out)?;
                memory.write(out, env.table_row_count(table)?.to_le_bytes());
                Ok(0)
            })
        },
    )?;
    linker.func_wrap(
        m,
        "table_scan",
        |mut caller: Caller<'_>, table: u32, out_iter: u32| {
            let code = with_memory(&mut caller, |memory, env| {
                let out = memory.out::<4>(out_iter)?;
                memory.write(out, env.table_scan(table)?.to_le_bytes());
                Ok(0)
            });
            interrupted(&mut caller).map(|()| code)
        },
    )?;
    linker.func_wrap(
        m,
        "index_scan",
        |mut caller: Caller<'_>,
         table: u32,
         index: u32,
         scan: u32,
         scan_len: u32,
         out_iter: u32| {
            let code = with_memory(&mut caller, |memory, env| {
                let out = memory.out::<4>(out_iter)?;
                let iter = env.index_scan(table, index, memory.slice(scan, scan_len)?)?;
                memory.write(out, iter.to_le_bytes());
                Ok(0)
            });
            interrupted(&mut caller).map(|()| code)
        },
    )?;
    linker.func_wrap(
        m,
        "row_iter_advance",
        |mut caller: Caller<'_>, iter: u32, buf: u32, buf_len: u32| {
            with_memory(&mut caller, |memory, env| {
                let buf_len = memory.out::<4>(buf_len)?;
                let buf = memory.range(buf, memory.read_u32(buf_len))?;
                let (code, len) = match env.row_iter_advance(iter, memory.slice_mut(buf))? {
                    Advance::More { written } => (0, written),
                    Advance::Exhausted { written } => (EXHAUSTED.into(), written),
                    Advance::BufferTooSmall { needed } => {
                        (Errno::BUFFER_TOO_SMALL.code().into(), needed)
                    }
                };
                memory.write(buf_len, len32(len).to_le_bytes());
                Ok(code)
            })
        },
    )?;
    linker.func_wrap(m, "row_iter_close", |mut caller: Caller<'_>, iter: u32| {
        code(caller.data_mut().env.row_iter_close(iter).map(|()| 0))
    })?;

    linker.func_wrap(
        m,
        "insert",
        |mut caller: Caller<'_>, table: u32, row: u32, row_len: u32| {
            with_memory(&mut caller, |memory, env| {
                let row = memory.range(row, row_len)?;
                env.insert(table, memory.slice_mut(row))?;
                Ok(0)
            })
        },
    )?;
    linker.func_wrap(
        m,
        "update_by_unique",
        |mut caller: Caller<'_>, table: u32, index: u32, row: u32, row_len: u32| {
            with_memory(&mut caller, |memory, env| {
                env.update_by_unique(table, index, memory.slice(row, row_len)?)?;
                Ok(0)
            })
        },
    )?;
    linker.func_wrap(
        m,
        "delete_by_index_scan",
        |mut caller: Caller<'_>,
         table: u32,
         index: u32,
         scan: u32,
         scan_len: u32,
         out_count: u32| {
            with_memory(&mut caller, |memory, env| {
                let out = memory.out::<4>(out_count)?;
                let count =
                    env.delete_by_index_scan(table, index, memory.slice(scan, scan_len)?)?;
                memory.write(out, count.to_le_bytes());
                Ok(0)
            })
        },
    )?;
    linker.func_wrap(
        m,
        "delete_rows",
        |mut caller: Caller<'_>, table: u32, rows: u32, rows_len: u32, out_count: u32| {
            with_memory(&mut caller, |memory, env| {
                let out = memory.out::<4>(out_count)?;
                let count = env.delete_rows(table, memory.slice(rows, rows_len)?)?;
                memory.write(out, count.to_le_bytes());
                Ok(0)
            })
        },
    )?;
    linker.func_wrap(
        m,
        "clear_table",
        |mut caller: Caller<'_>, table: u32, out_count: u32| {
            with_memory(&mut caller, |memory, env| {
                let out = memory.out::<8>(out_count)?;
                memory.write(out, env.clear_table(table)?.to_le_bytes());
                Ok(0)
            })
        },
    )?;

    linker.func_wrap(
        m,
        "console_log",
        |mut caller: Caller<'_>,
         level: u32,
         target: u32,
         target_len: u32,
         file: u32,
         file_len: u32,
         line: u32,
         message: u32,
         message_len: u32| {
            let code = with_memory(&mut caller, |memory, env| {
                let level = LogLevel::from_code(level).ok_or(Errno::BAD_ENCODING)?;
                let target = memory.slice(target, target_len)?;
                let file = memory.slice(file, file_len)?;
                let message = memory.slice(message, message_len)?;
                env.console_log(level, target, file, line, message);
                Ok(0)
            });
            if code != 0 {
                dropped_log_line(level, code);
            }
        },
    )?;

    // The two ways a procedure opens a transaction differ only in the kind of transaction.
    type Start = fn(&mut InstanceEnv) -> Result<Timestamp, Errno>;
    let starts: [(&str, Start); 2] = [
        ("procedure_start_tx", InstanceEnv::procedure_start_tx),
        (
            "procedure_start_read_tx",
            InstanceEnv::procedure_start_read_tx,
        ),
    ];
    for (name, start) in starts {
        linker.func_wrap(
            m,
            name,
            move |mut caller: Caller<'_>, out_timestamp: u32| {
                with_memory(&mut caller, |memory, env| {
                    let out = memory.out::<8>(out_timestamp)?;
                    let timestamp = start(env)?;
                    memory.write(out, timestamp.to_micros_since_unix_epoch().to_le_bytes());
                    Ok(0)
                })
            },
        )?;
    }
    linker.func_wrap(m, "procedure_commit_tx", |mut caller: Caller<'_>| {
        code(caller.data_mut().env.procedure_commit_tx().map(|()| 0))
    })?;
    linker.func_wrap(m, "procedure_abort_tx", |mut caller: Caller<'_>| {
        code(caller.data_mut().env.procedure_abort_tx().map(|()| 0))
    })?;
    linker.func_wrap(
        m,
        "procedure_http_request",
        |mut caller: Caller<'_>, request: u32, request_len: u32, out_response: u32| {
            with_memory(&mut caller, |memory, env| {
                let out = memory.out::<4>(out_response)?;
                let source = env.procedure_http_request(memory.slice(request, request_len)?)?;
                memory.write(out, source.to_le_bytes());
                Ok(0)
            })
        },
    )?;
    Ok(linker)
}

/// Runs one import over the module's memory and the instance's environment, and returns its
/// code: what `f` returns, or the error's code.
fn with_memory(
    caller: &mut Caller<'_>,
    f: impl FnOnce(&mut GuestMemory<'_>, &mut InstanceEnv) -> Result<i32, Errno>,
) -> i32 {
    let memory = match caller.data().memory {
        Some(memory) => Some(memory),
        // Only before the instance is complete (its start function): look it up by name.
        None => caller.get_export("memory").and_then(Extern::into_memory),
    };
    let Some(memory) = memory else {
        return Errno::OUT_OF_BOUNDS.code().into();
    };
    let (bytes, data) = memory.data_and_store_mut(caller);
    code(f(&mut GuestMemory::new(bytes), &mut data.env))
}

/// Traps with the deadline's own trap if the import just run stopped because the call's
/// deadline passed ([`InstanceEnv::take_interrupt`]): the call then ends as wasm code past
/// its deadline ends, `deadline exceeded`.
fn interrupted(caller: &mut Caller<'_>) -> wasmtime::Result<()> {
    if caller.data_mut().env.take_interrupt() {
        return Err(wasmtime::Trap::Interrupt.into());
    }
    Ok(())
}

/// The code an import returns for `result`: the value, or the error's code.
fn code(result: Result<i32, Errno>) -> i32 {
    result.unwrap_or_else(|errno| errno.code().into())
}

/// A log line whose level or text could not be read is dropped (the ABI says so: logging
/// never fails a call), but the host says it happened.
fn dropped_log_line(level: u32, code: i32) {
    let reason = if code == i32::from(Errno::OUT_OF_BOUNDS.code()) {
        "a pointer or length is outside the module's memory".to_owned()
    } else {
        format!("{level} is not a log level")
    };
    tracing::warn!(target: "wasmod::host", "a module's log line was dropped: {reason}");
}

/// A byte count the host wrote into the module's memory, which is at most 4 GiB.
fn len32(len: usize) -> u32 {
    u32::try_from(len).unwrap_or(u32::MAX)
}
