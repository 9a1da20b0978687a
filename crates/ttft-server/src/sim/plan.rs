//! Turns a validated request into a generation plan: the tokens to stream, of which kind, and
//! any failure a flaky profile will inject.

use serde_json::Value;

use super::profile::{Behaviour, Profile};
use super::text::{self, Rng};

/// What a token is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PieceKind {
    /// Reasoning text.
    Reasoning,
    /// Answer text.
    Answer,
    /// The tool call's name (first fragment).
    ToolName,
    /// Tool-call argument text.
    ToolArgs,
}

/// One planned token.
#[derive(Debug, Clone, PartialEq)]
pub struct Piece {
    /// Kind.
    pub kind: PieceKind,
    /// Text.
    pub text: String,
}

/// A fault to inject.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Fault {
    /// Send an error event after this many tokens.
    ErrorAfter(u32),
    /// Close the connection after this many tokens.
    DropAfter(u32),
    /// Pause this long (ms) after this many tokens.
    StallAfter(u32, u64),
}

/// The plan.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    /// Tokens in order.
    pub pieces: Vec<Piece>,
    /// Fault, if any.
    pub fault: Option<Fault>,
    /// Finish reason.
    pub finish_reason: &'static str,
    /// Tool name, when the plan is a tool call.
    pub tool_name: Option<String>,
}

/// What the plan needs from the request.
#[derive(Debug, Clone, Default)]
pub struct PlanInput<'a> {
    /// Prompt text (all messages).
    pub prompt: &'a str,
    /// Max tokens.
    pub max_tokens: u32,
    /// `tools` array.
    pub tools: Option<&'a Value>,
    /// `response_format`.
    pub response_format: Option<&'a Value>,
    /// Seed (request seed mixed with the server seed and request counter).
    pub seed: u64,
}

fn pieces(kind: PieceKind, toks: Vec<String>) -> impl Iterator<Item = Piece> {
    toks.into_iter().map(move |text| Piece { kind, text })
}

/// Builds the plan.
pub fn plan(profile: &Profile, input: &PlanInput<'_>) -> Plan {
    let mut rng = Rng::new(input.seed);
    let chinese = text::is_chinese(input.prompt);
    let n = input.max_tokens.max(1) as usize;
    let wants_json = input
        .response_format
        .and_then(|r| r.get("type"))
        .and_then(Value::as_str)
        .is_some_and(|t| t == "json_object" || t == "json_schema");
    let tool = input
        .tools
        .and_then(Value::as_array)
        .and_then(|t| t.first());
    let mut out = Vec::new();
    let mut finish = "length";
    let mut tool_name = None;
    if let Some(tool) = tool {
        let f = tool.get("function").unwrap_or(tool);
        let name = f
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or("tool")
            .to_owned();
        let schema = f
            .get("parameters")
            .or_else(|| f.get("input_schema"))
            .cloned()
            .unwrap_or(Value::Null);
        let args = text::value_for_schema(&schema, &mut rng, 1);
        out.push(Piece {
            kind: PieceKind::ToolName,
            text: name.clone(),
        });
        let compact = serde_json::to_string(&args).unwrap_or_default();
        let chars: Vec<char> = compact.chars().collect();
        out.extend(chars.chunks(3).map(|c| Piece {
            kind: PieceKind::ToolArgs,
            text: c.iter().collect(),
        }));
        finish = "tool_calls";
        tool_name = Some(name);
    } else if profile.behaviour == Behaviour::Agent || wants_json {
        let schema = input
            .response_format
            .and_then(|r| r.pointer("/json_schema/schema"))
            .cloned()
            .unwrap_or(Value::Null);
        let v = text::value_for_schema(&schema, &mut rng, 0);
        out.extend(pieces(PieceKind::Answer, text::json_tokens(&v)));
        finish = "stop";
    } else {
        if profile.behaviour == Behaviour::Reasoning {
            let r = (n / 3).clamp(1, 64);
            out.extend(pieces(
                PieceKind::Reasoning,
                text::prose_tokens(&mut rng, r, chinese),
            ));
        }
        if profile.behaviour == Behaviour::Openers {
            out.extend(pieces(PieceKind::Answer, text::opener(&mut rng, chinese)));
        }
        if profile.behaviour == Behaviour::House {
            out.extend(pieces(PieceKind::Answer, text::house(chinese)));
        }
        let rest = n.saturating_sub(out.len()).max(1);
        let answer = if profile.behaviour == Behaviour::Markdown {
            text::markdown_tokens(&mut rng, rest)
        } else {
            text::prose_tokens(&mut rng, rest, chinese)
        };
        out.extend(pieces(PieceKind::Answer, answer));
    }
    if out.len() > n && finish == "length" {
        out.truncate(n);
    }
    let fault = (profile.behaviour == Behaviour::Flaky).then(|| {
        let at = (out.len() as u32 / 2).max(1);
        match rng.below(4) {
            0 => Some(Fault::ErrorAfter(at)),
            1 => Some(Fault::DropAfter(at)),
            2 => Some(Fault::StallAfter(at, 1500)),
            _ => None,
        }
    });
    Plan {
        pieces: out,
        fault: fault.flatten(),
        finish_reason: finish,
        tool_name,
    }
}
