package builtin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/stepgate/stepgate/descriptor"
	"github.com/stepgate/stepgate/executor"
)

// Question is one question for the human.
type Question struct {
	Question string   `json:"question" jsonschema:"description=The question"`
	Header   string   `json:"header,omitempty" jsonschema:"description=A short label"`
	Options  []string `json:"options,omitempty" jsonschema:"description=Answers to choose from"`
	Multiple bool     `json:"multiple,omitempty" jsonschema:"description=Several options may be chosen"`
}

// QuestionInput is the input of question.
type QuestionInput struct {
	Questions []Question `json:"questions" jsonschema:"description=The questions to ask"`
}

// QuestionTool builds question: the call waits on an input ticket until a
// human answers (engine approve TICKET --answers '[…]'), and the answers are
// its result. It asks no permission, and "always" saves nothing.
func QuestionTool() (*executor.Tool, error) {
	return executor.New("question",
		"Ask the human one or more questions and wait for the answers. Use it when you need a decision or information only they have.",
		askQuestions, executor.WithEffect(descriptor.ReadOnly), executor.AwaitsInput(), executor.Anywhere(),
		executor.WithRequests(func(_ executor.Call, in QuestionInput) ([]descriptor.Request, error) {
			if len(in.Questions) == 0 {
				return nil, errors.New("no questions")
			}
			return nil, nil
		}))
}

func askQuestions(_ context.Context, c executor.Call, in QuestionInput) (string, error) {
	var answers []json.RawMessage
	if err := json.Unmarshal(c.Answers, &answers); err != nil || len(answers) != len(in.Questions) {
		return "", fmt.Errorf("the reply must carry a JSON list of %d answers", len(in.Questions))
	}
	var b strings.Builder
	for i, q := range in.Questions {
		var text string
		if json.Unmarshal(answers[i], &text) != nil {
			text = string(answers[i])
		}
		fmt.Fprintf(&b, "Q: %s\nA: %s\n", q.Question, text)
	}
	return strings.TrimSuffix(b.String(), "\n"), nil
}
