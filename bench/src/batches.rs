//! What a pipeline pays for carrying every script body: `Batch::pipeline()`
//! (each call an `EVAL` with the body, immune to `SCRIPT FLUSH` between its
//! commands) against a pipeline of `EVALSHA` (what a pipeline that sends
//! each body once costs on a warm server) and `Batch::transaction()` (body
//! once, atomic).

use std::time::Instant;

use redis::aio::MultiplexedConnection;
use redis_script::Batch;

use crate::BoxError;
use crate::measure::{Samples, Summary};
use crate::variants::{AMOUNT, DESTINATION, SOURCE, transfer};

/// Calls per batch.
pub const CALLS_PER_BATCH: usize = 32;

/// The ways a batch of [`CALLS_PER_BATCH`] transfers is sent.
#[derive(Debug, Clone, Copy)]
enum Shape {
    /// `Batch::pipeline()`: every call `EVAL` with the body.
    PipelineWithBodies,
    /// `redis::Pipeline` of `EVALSHA`, no fallback: fails on a cold server.
    PipelineOfEvalsha,
    /// `Batch::transaction()`: `MULTI`, one `EVAL`, `EVALSHA`s, `EXEC`.
    Transaction,
}

impl Shape {
    const ALL: [Shape; 3] = [
        Shape::PipelineWithBodies,
        Shape::PipelineOfEvalsha,
        Shape::Transaction,
    ];

    fn label(self) -> &'static str {
        match self {
            Shape::PipelineWithBodies => "`Batch::pipeline()`: `EVAL` + body per call",
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

fn batch(shape: Shape) -> Result<(Batch, redis::Pipeline, Vec<TransferHandle>), BoxError> {
    let mut batch = match shape {
        Shape::Transaction => Batch::transaction(),
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
    for shape in Shape::ALL {
        let (batch, plain, handles) = batch(shape)?;
        let request_bytes = match shape {
            Shape::PipelineOfEvalsha => plain.get_packed_pipeline().len(),
            _ => batch_bytes(shape)?,
        };
        prepared.push((shape, batch, plain, request_bytes, handles));
    }
    let mut samples: Vec<Samples> = Shape::ALL.iter().map(|_| Samples::default()).collect();
    for round in 0..batches {
        for (index, (shape, batch, plain, _, handles)) in prepared.iter_mut().enumerate() {
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
        let first_use_only = matches!(shape, Shape::Transaction) && index > 0;
        let command = if first_use_only {
            call.command()
        } else {
            call.eval_command()
        };
        pipeline.add_command(command);
    }
    Ok(pipeline.get_packed_pipeline().len())
}
