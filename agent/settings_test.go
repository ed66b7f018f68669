package agent_test

import "github.com/stepgate/stepgate/events"

func eventsSettings(task string) events.ModelSettings {
	return events.ModelSettings{Provider: "scripted", Model: "m1", System: "You are careful.", Task: task}
}
