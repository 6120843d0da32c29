//! `respond`: continuation building and validation against PROTOCOL §7.
use forgestream_core::reduce::{ReducerConfig, SessionView};
use forgestream_core::respond::{
    continuation, deny_unanswered, user_message, validate_input, Decision, RespondError,
};
use forgestream_core::wire::{Approval, InputItem, UserContent};
use serde_json::json;

/// t1 paused with approvals for call_A (main) and call_S (thread th_a), and an ask in main.
fn paused_view() -> SessionView {
    let mut v = SessionView::new("s", ReducerConfig::default());
    let frames = [
        json!({"type":"turn.created","id":"a0","thread_id":null,"turn_id":"t1","previous_turn_id":null,"state":{"status":"running"}}),
        json!({"type":"model.message","id":"m1","thread_id":"main","tool_calls":[
            {"id":"call_A","type":"function","function":{"name":"edit","arguments":"{}"}},
            {"id":"call_Q","type":"function","function":{"name":"ask_user_question","arguments":"{\"question\":\"Why?\",\"options\":[]}"}}],
            "finish_reason":"tool_calls"}),
        json!({"type":"model.message","id":"m2","thread_id":"th_a","tool_calls":[
            {"id":"call_S","type":"function","function":{"name":"edit","arguments":"{}"}}],"finish_reason":"tool_calls"}),
        json!({"type":"tool.approval_required","id":"p1","thread_id":"th_a","tool_calls":[{"id":"call_S","source_event_id":"m2"}]}),
        json!({"type":"tool.response_required","id":"p2","thread_id":"main","tool_calls":[{"id":"call_Q","source_event_id":"m1"}]}),
        json!({"type":"tool.approval_required","id":"p3","thread_id":"main","tool_calls":[{"id":"call_A","source_event_id":"m1"}]}),
        json!({"type":"turn.done","id":"a9","thread_id":null,"state":{"status":"done","output":null,"required_actions":[]}}),
    ];
    for (i, f) in frames.iter().enumerate() {
        v.apply_live("t1", Some(i as u64 + 1), &f.to_string())
            .unwrap();
    }
    v
}

fn allow(id: &str) -> Decision {
    Decision::Allow {
        tool_call_id: id.into(),
    }
}

#[test]
fn full_batch_in_pending_order_with_threads_from_the_view() {
    let v = paused_view();
    assert_eq!(v.pending_actions().len(), 3);
    let input = continuation(
        &v,
        &[
            Decision::Answer {
                tool_call_id: "call_Q".into(),
                content: "because".into(),
            },
            allow("call_A"),
            Decision::Deny {
                tool_call_id: "call_S".into(),
                reason: None,
            },
        ],
    )
    .unwrap();
    assert_eq!(
        serde_json::to_value(&input).unwrap(),
        json!([
            {"type":"user.tool_approval","thread_id":"th_a","tool_call_id":"call_S","approval":{"status":"deny"}},
            {"type":"user.tool_response","thread_id":"main","tool_call_id":"call_Q","content":"because"},
            {"type":"user.tool_approval","thread_id":"main","tool_call_id":"call_A","approval":{"status":"allow"}},
        ])
    );
}

#[test]
fn refusals() {
    let v = paused_view();
    let answer = Decision::Answer {
        tool_call_id: "call_Q".into(),
        content: "x".into(),
    };
    assert_eq!(
        continuation(&v, &[allow("call_A"), answer.clone()]),
        Err(RespondError::Incomplete {
            missing: vec!["call_S".into()]
        })
    );
    assert_eq!(
        continuation(&v, &[allow("call_A"), allow("call_A")]),
        Err(RespondError::Duplicate {
            tool_call_id: "call_A".into()
        })
    );
    assert_eq!(
        continuation(&v, &[allow("nope")]),
        Err(RespondError::NotPending {
            tool_call_id: "nope".into()
        })
    );
    assert!(matches!(
        continuation(&v, &[allow("call_Q")]),
        Err(RespondError::WrongKind { .. })
    ));
    assert_eq!(
        continuation(&v, &[Decision::AuthDone]),
        Err(RespondError::AuthNotPending)
    );
    assert_eq!(
        user_message(&v, UserContent::Text("hello".into())),
        Err(RespondError::MessageWhilePending)
    );
    // deny_unanswered fills in explicit denials for approvals only; the question still needs text.
    let filled = deny_unanswered(&v, std::slice::from_ref(&answer), Some("later"));
    assert_eq!(filled.len(), 3);
    assert!(continuation(&v, &filled).is_ok());
    assert!(matches!(
        continuation(&v, &deny_unanswered(&v, &[], None)),
        Err(RespondError::Incomplete { missing }) if missing == vec!["call_Q".to_string()]
    ));
}

#[test]
fn validate_hand_built_input() {
    let v = paused_view();
    let good = vec![
        InputItem::ToolApproval {
            thread_id: "th_a".into(),
            tool_call_id: "call_S".into(),
            approval: Approval::Allow,
        },
        InputItem::ToolResponse {
            thread_id: "main".into(),
            tool_call_id: "call_Q".into(),
            content: "ok".into(),
        },
        InputItem::ToolApproval {
            thread_id: "main".into(),
            tool_call_id: "call_A".into(),
            approval: Approval::Allow,
        },
    ];
    assert_eq!(validate_input(&v, &good), Ok(()));
    let mut wrong_thread = good.clone();
    wrong_thread[0] = InputItem::ToolApproval {
        thread_id: "main".into(),
        tool_call_id: "call_S".into(),
        approval: Approval::Allow,
    };
    assert!(matches!(
        validate_input(&v, &wrong_thread),
        Err(RespondError::WrongThread { .. })
    ));
    let mut mixed = good.clone();
    mixed.push(InputItem::UserMessage {
        content: UserContent::Text("hi".into()),
    });
    assert_eq!(
        validate_input(&v, &mixed),
        Err(RespondError::MessageWhilePending)
    );
    assert!(matches!(
        validate_input(&v, &good[..2]),
        Err(RespondError::Incomplete { .. })
    ));
    assert!(matches!(
        validate_input(&v, &[]),
        Err(RespondError::Incomplete { .. })
    ));
}

#[test]
fn nothing_pending_allows_only_a_message() {
    let mut v = SessionView::new("s", ReducerConfig::default());
    assert_eq!(continuation(&v, &[]), Err(RespondError::NothingPending));
    assert_eq!(
        user_message(&v, UserContent::Text("  ".into())),
        Err(RespondError::EmptyContent { tool_call_id: None })
    );
    let input = user_message(&v, UserContent::Text("hi".into())).unwrap();
    assert_eq!(
        serde_json::to_value(&input).unwrap(),
        json!([{"type":"user.message","content":"hi"}])
    );
    assert_eq!(validate_input(&v, &input), Ok(()));
    v.apply_live("t1", Some(1), r#"{"type":"turn.created","id":"a","thread_id":null,"turn_id":"t1","previous_turn_id":null,"state":{"status":"running"}}"#).unwrap();
    assert!(v.pending_actions().is_empty());
}
