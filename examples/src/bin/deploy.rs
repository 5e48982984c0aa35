//! The deploy step of a least-privilege set-up: loads every script the
//! workflows call and deploys their library, with a user allowed to load
//! (`+script|load +function|load +function|list`), and prints the
//! manifest: kind, name, SHA1 and file of each. With a directory argument
//! it also writes each source as the calls send it and `manifest.tsv`
//! there, for a pipeline that loads them with `redis-cli`.
//!
//! Run: `cargo run -p redis-script-examples --bin deploy [-- <directory>]`
//! (uses `REDIS_URL` when set, else a throwaway `redis-server`).

use redis_script_examples::connect;
use redis_script_examples::workflows::deploy::{deploy_all, manifest, write_sources};

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    if let Some(directory) = std::env::args_os().nth(1) {
        write_sources(std::path::Path::new(&directory))?;
        println!(
            "wrote the sources and manifest.tsv to {}",
            directory.to_string_lossy()
        );
    }
    let mut demo = connect().await?;
    deploy_all(&mut demo.connection).await?;
    print!("{}", manifest());
    Ok(())
}
