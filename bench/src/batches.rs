//! What a pipeline pays for its script bodies: `Batch::pipeline()` with
//! `KnownScripts` (no body on a warm server), without (the body once, in
//! the first call), and cold (after `SCRIPT FLUSH`, one body per script),
//! against a hand-written pipeline of `EVALSHA` and `Batch::transaction()`
//! (body once, atomic).

use std::time::Instant;

use redis::aio::MultiplexedConnection;
use redis_script::{Batch, KnownScripts};

use crate::BoxError;
use crate::measure::{Samples, Summary};
use crate::variants::{AMOUNT, DESTINATION, SOURCE, transfer};

/// Calls per batch.
pub const CALLS_PER_BATCH: usize = 32;

/// The ways a batch of [`CALLS_PER_BATCH`] transfers is sent.
#[derive(Debug, Clone, Copy)]
enum Shape {
    /// `Batch::pipeline().known_scripts(…)`, warm: every call `EVALSHA`.
    PipelineKnown,
    /// `Batch::pipeline()`: the first call `EVAL` with the body.
    PipelineBodyOnce,
    /// `Batch::pipeline().known_scripts(…)` after a `SCRIPT FLUSH` (not
    /// timed) before each batch: the first call answers `NOSCRIPT`, and
    /// the calls go again with one body.
    PipelineKnownCold,
    /// `redis::Pipeline` of `EVALSHA`, no fallback: fails on a cold server.
    PipelineOfEvalsha,
    /// `Batch::transaction()`: `MULTI`, one `EVAL`, `EVALSHA`s, `EXEC`.
    Transaction,
}

impl Shape {
    const ALL: [Shape; 5] = [
        Shape::PipelineKnown,
        Shape::PipelineBodyOnce,
        Shape::PipelineKnownCold,
        Shape::PipelineOfEvalsha,
        Shape::Transaction,
    ];

    fn label(self) -> &'static str {
        match self {
            Shape::PipelineKnown => "`Batch::pipeline().known_scripts(…)`, warm: no body",
            Shape::PipelineBodyOnce => "`Batch::pipeline()`: body once, first call `EVAL`",
            Shape::PipelineKnownCold => {
                "`Batch::pipeline().known_scripts(…)`, cold (after `SCRIPT FLUSH`): `EVALSHA`s, `NOSCRIPT`, again with one body"
            }
            Shape::PipelineOfEvalsha => "`redis::Pipeline` of `EVALSHA` (fails after a flush)",
            Shape::Transaction => "`Batch::transaction()`: body once, `MULTI`/`EXEC`",
        }
    }
}

/// One measured row.
#[derive(Debug)]
pub struct BatchRow {
    pub label: &'static str,
    pub request_bytes: usize,
    pub summary: Summary,
}

type TransferHandle = redis_script::batch::Handle<(i64, i64)>;

fn batch(
    shape: Shape,
    known: &KnownScripts,
) -> Result<(Batch, redis::Pipeline, Vec<TransferHandle>), BoxError> {
    let mut batch = match shape {
        Shape::Transaction => Batch::transaction(),
        Shape::PipelineKnown | Shape::PipelineKnownCold => Batch::pipeline().known_scripts(known),
        _ => Batch::pipeline(),
    };
    let mut plain = redis::Pipeline::new();
    let mut handles = Vec::with_capacity(CALLS_PER_BATCH);
    for _ in 0..CALLS_PER_BATCH {
        let call = transfer::call(SOURCE, DESTINATION, AMOUNT);
        plain.add_command(call.command());
        handles.push(batch.add(call)?);
    }
    Ok((batch, plain, handles))
}

/// `batches` batches of every shape, taking turns.
pub async fn measure(
    connection: &mut MultiplexedConnection,
    batches: usize,
) -> Result<Vec<BatchRow>, BoxError> {
    let mut prepared = Vec::new();
    let known = KnownScripts::default();
    for shape in Shape::ALL {
        let (batch, plain, handles) = batch(shape, &known)?;
        let request_bytes = match shape {
            Shape::PipelineOfEvalsha => plain.get_packed_pipeline().len(),
            _ => batch_bytes(shape)?,
        };
        prepared.push((shape, batch, plain, request_bytes, handles));
    }
    let mut samples: Vec<Samples> = Shape::ALL.iter().map(|_| Samples::default()).collect();
    for round in 0..batches {
        for (index, (shape, batch, plain, _, handles)) in prepared.iter_mut().enumerate() {
            if let Shape::PipelineKnownCold = shape {
                let () = redis::cmd("SCRIPT")
                    .arg("FLUSH")
                    .query_async(connection)
                    .await?;
            }
            let start = Instant::now();
            match shape {
                Shape::PipelineOfEvalsha => {
                    let replies: Vec<redis::Value> = plain.query_async(connection).await?;
                    if let Some(error) = replies
                        .iter()
                        .find(|reply| matches!(reply, redis::Value::ServerError(_)))
                    {
                        return Err(format!("a pipelined EVALSHA failed: {error:?}").into());
                    }
                }
                _ => {
                    let mut replies = batch.run(connection).await?;
                    // The first (unmeasured) round proves every call ran.
                    for handle in handles.drain(..) {
                        replies.take(handle)?;
                    }
                }
            }
            if round > 0 {
                samples[index].push(start.elapsed());
            }
        }
    }
    Ok(prepared
        .into_iter()
        .zip(samples)
        .map(|((shape, _, _, request_bytes, _), samples)| BatchRow {
            label: shape.label(),
            request_bytes,
            summary: samples.summarize(),
        })
        .collect())
}

/// The RESP bytes a `Batch` of this shape writes: the same commands as
/// `redis-script` queues them, packed by a plain pipeline.
fn batch_bytes(shape: Shape) -> Result<usize, BoxError> {
    let mut pipeline = redis::Pipeline::new();
    if let Shape::Transaction = shape {
        pipeline.atomic();
    }
    for index in 0..CALLS_PER_BATCH {
        let call = transfer::call(SOURCE, DESTINATION, AMOUNT);
        let first_use_only = index > 0 || matches!(shape, Shape::PipelineKnown);
        let command = if first_use_only {
            call.command()
        } else {
            call.eval_command()
        };
        pipeline.add_command(command);
    }
    let mut bytes = pipeline.get_packed_pipeline().len();
    if let Shape::PipelineKnownCold = shape {
        // Before the calls again with one body (`pipeline`), the
        // `EVALSHA`s that answered `NOSCRIPT`.
        let mut first = redis::Pipeline::new();
        for _ in 0..CALLS_PER_BATCH {
            first.add_command(transfer::call(SOURCE, DESTINATION, AMOUNT).command());
        }
        bytes += first.get_packed_pipeline().len();
    }
    Ok(bytes)
}
