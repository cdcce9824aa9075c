//! One WebSocket connection of `/api/run`: reads the page's messages, submits
//! runs, and forwards each run's messages back.

use axum::extract::ws::{Message, WebSocket};
use tokio::sync::mpsc::UnboundedReceiver;

use crate::app::AppState;
use crate::plan;
use crate::protocol::{self, ClientMessage, ServerMessage};
use crate::scheduler::Ticket;

/// Largest message the protocol reads. Bigger ones (up to the transport's hard
/// cap, [`MAX_FRAME`]) get an `error` and the connection carries on.
pub const MAX_MESSAGE: usize = 16 * 1024;

/// Hard cap on a WebSocket message or frame: past it the transport closes the
/// connection (close code 1009) without buffering more.
pub const MAX_FRAME: usize = 64 * 1024;

/// The run this connection has queued or running, and its messages.
type Current = Option<(Ticket, UnboundedReceiver<ServerMessage>)>;

/// Serves one connection until the page closes it or the server stops.
pub async fn serve(mut socket: WebSocket, state: AppState) {
    let mut current: Current = None;
    let mut stopping = state.stopping.clone();
    let mut closing = false;
    loop {
        let reply = tokio::select! {
            incoming = socket.recv() => match incoming {
                Some(Ok(message)) => match on_message(message, &mut current, &state) {
                    Flow::Reply(reply) => Some(reply),
                    Flow::Quiet => None,
                    Flow::Close => break,
                },
                // Closed, reset, or over the transport cap: nothing more to read.
                Some(Err(_)) | None => break,
            },
            event = next_event(&mut current) => {
                if event.is_final() {
                    current = None;
                }
                Some(event)
            },
            stop = stopping.wait_for(|stop| *stop) => {
                // Stopping, or the server is gone (an error): close either way.
                // The guard is dropped here, before any await.
                drop(stop);
                closing = true;
                None
            }
        };
        if closing {
            // Say why the run ended (e.g. "shutting down") before closing.
            if let Some((_, events)) = current.as_mut() {
                while let Ok(event) = events.try_recv() {
                    let _ = socket.send(Message::Text(event.to_json().into())).await;
                }
            }
            let _ = socket.send(Message::Close(None)).await;
            break;
        }
        if let Some(reply) = reply {
            if socket
                .send(Message::Text(reply.to_json().into()))
                .await
                .is_err()
            {
                break;
            }
        }
    }
    // Dropping the ticket cancels a waiting run and kills a running one.
    drop(current);
}

/// What to do after a message from the page.
enum Flow {
    Reply(ServerMessage),
    Quiet,
    Close,
}

/// The next message of the current run; never resolves when there is none.
async fn next_event(current: &mut Current) -> ServerMessage {
    match current {
        Some((_, events)) => events
            .recv()
            .await
            .unwrap_or_else(|| ServerMessage::error("the run ended without a result")),
        None => std::future::pending().await,
    }
}

fn on_message(message: Message, current: &mut Current, state: &AppState) -> Flow {
    let text =
        match message {
            Message::Text(text) => text,
            Message::Binary(_) => return Flow::Reply(ServerMessage::error(
                "binary messages are not understood: send JSON text such as {\"type\":\"cancel\"}",
            )),
            Message::Close(_) => return Flow::Close,
            // Pings are answered by the transport.
            Message::Ping(_) | Message::Pong(_) => return Flow::Quiet,
        };
    if text.len() > MAX_MESSAGE {
        return Flow::Reply(ServerMessage::error(format!(
            "message too large: {} bytes, the limit is {MAX_MESSAGE}",
            text.len()
        )));
    }
    match protocol::parse(text.as_str()) {
        Err(reason) => Flow::Reply(ServerMessage::error(reason)),
        Ok(ClientMessage::Cancel) => match current {
            Some((ticket, _)) => {
                ticket.cancel();
                Flow::Quiet
            }
            None => Flow::Reply(ServerMessage::error("there is no run to cancel")),
        },
        Ok(ClientMessage::Run { .. }) if current.is_some() => Flow::Reply(ServerMessage::error(
            "this page already has a run queued or running: cancel it or wait for its result",
        )),
        Ok(ClientMessage::Run { step, params }) => {
            let plan = match plan::plan(&step, &params, &state.limits) {
                Ok(plan) => plan,
                Err(err) => return Flow::Reply(ServerMessage::error(err.to_string())),
            };
            match state.scheduler.submit(plan) {
                Ok(run) => {
                    *current = Some(run);
                    Flow::Quiet
                }
                Err(err) => Flow::Reply(ServerMessage::error(err.to_string())),
            }
        }
    }
}
