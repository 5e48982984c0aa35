//! What a reviewer checks before a script ships, as the analysis proved
//! it: the commands it calls and which write, every loop and what bounds
//! it, every read whose reply grows with the data. `redis-script-check
//! --report` prints it per script, next to the findings.

/// The facts of one script for its review.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Review {
    /// Each command the script calls, once, in the order of first use.
    pub commands: Vec<CommandUse>,
    /// Every loop, in source order.
    pub loops: Vec<LoopSite>,
    /// Every read whose reply grows with the data, in source order.
    pub growing_reads: Vec<ReadSite>,
    /// The lines where a command takes a key that does not come from KEYS
    /// (reported as errors unless the script opted out).
    pub keys_outside: Vec<usize>,
    /// Each key a command takes, with how the command uses it, once per
    /// key and command, in the order of first use.
    pub keys: Vec<KeyTaken>,
}

/// A key a command of the script takes, and how the command uses it (from
/// the flags of its key specs): what an ACL user needs on that key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyTaken {
    pub key: TakenKey,
    /// Upper-case command name (`GET`, `XINFO STREAM`).
    pub command: String,
    /// The first line that takes it.
    pub line: usize,
    /// The command reads the key's value (key spec flag `access`).
    pub reads: bool,
    /// The command changes the key's value (`insert`, `update`, `delete`).
    pub writes: bool,
}

/// Where a key a command takes comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum TakenKey {
    /// An element of KEYS: `KEYS[n]` (1-based), or `None` for an index
    /// computed at run time.
    Key(Option<usize>),
    /// A key built by appending to an element of KEYS (`KEYS[1] .. id`).
    BuiltFromKey(Option<usize>),
    /// A key built by appending to `ARGV[n]`, an argument declared a key
    /// prefix.
    BuiltFromArg(usize),
    /// A key the script reads from data or computes at run time: no
    /// pattern bounds it.
    Unbounded,
}

/// A command the script calls.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandUse {
    /// Upper-case, as Redis names it (`GET`, `CONFIG GET`).
    pub name: String,
    /// The first line that calls it.
    pub line: usize,
    /// It writes, on some server of the target.
    pub writes: bool,
}

/// A loop and what bounds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoopSite {
    pub line: usize,
    pub column: usize,
    /// `while`, `repeat`, `for` (numeric) or `for … in`.
    pub kind: &'static str,
    pub bound: LoopBound,
}

/// What ends a loop, as far as the analysis knows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LoopBound {
    /// Its condition or range, quoted (`i = 1, #ids`, `cursor ~= '0'`),
    /// with nothing known to make it grow with the data.
    Written(String),
    /// One pass per element of a read that grows with the data: the read's
    /// command and line.
    GrowingRead { command: String, line: usize },
    /// Nothing ends it (the `endless_loop` finding).
    Never,
}

/// A read whose reply grows with the data.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadSite {
    pub line: usize,
    pub column: usize,
    /// Upper-case command name.
    pub command: String,
    /// What it reads: "the whole collection", "every element in its range".
    pub reads: &'static str,
}

impl Review {
    pub(crate) fn command(&mut self, name: &str, line: usize, writes: bool) {
        match self.commands.iter_mut().find(|known| known.name == name) {
            Some(known) => known.writes |= writes,
            None => self.commands.push(CommandUse {
                name: name.to_owned(),
                line,
                writes,
            }),
        }
    }

    pub(crate) fn key(&mut self, taken: KeyTaken) {
        match self
            .keys
            .iter_mut()
            .find(|known| known.key == taken.key && known.command == taken.command)
        {
            Some(known) => {
                known.reads |= taken.reads;
                known.writes |= taken.writes;
            }
            None => self.keys.push(taken),
        }
    }

    pub(crate) fn key_outside(&mut self, line: usize) {
        if !self.keys_outside.contains(&line) {
            self.keys_outside.push(line);
        }
    }

    pub(crate) fn read(&mut self, site: ReadSite) {
        if !self.growing_reads.contains(&site) {
            self.growing_reads.push(site);
        }
    }

    /// A loop is walked once per pass of the loops around it: the last
    /// walk's bound is the one that holds.
    pub(crate) fn loop_site(&mut self, site: LoopSite) {
        self.loops
            .retain(|known| (known.line, known.column) != (site.line, site.column));
        self.loops.push(site);
    }

    pub(crate) fn finish(&mut self) {
        self.loops.sort_by_key(|site| (site.line, site.column));
        self.growing_reads
            .sort_by_key(|site| (site.line, site.column));
    }
}
