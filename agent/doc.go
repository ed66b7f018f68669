// Package agent is the model loop of `engine agent`: it starts a run (or
// resumes one), gives the model the run's catalogue as tool definitions,
// has each model turn committed before its calls are decided (a turn of
// calls sent with its step, whose first commit follows the turn's; the
// model's answer with record_turn), gives the step's results back to the
// model, and goes on until the model answers without calls or the run
// reaches its bound of steps.
//
// The conversation is run state: the run's start pins the agent settings
// (events.ModelSettings), each turn is a ModelTurnRecorded commit, and
// each call's result is its step's recorded result, so [Conversation]
// rebuilds the exact conversation from the run as `show` answers it, on
// any host; [Resume] goes on from there without sending a recorded turn
// again and without running a step twice.
//
// The package talks to the engine only through [client.API] (the NATS
// service's Go client, or the in-process engine) and to the model only
// through [model.Provider].
package agent
