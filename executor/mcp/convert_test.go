package mcp_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stepgate/stepgate/descriptor"
	"github.com/stepgate/stepgate/executor"
	"github.com/stepgate/stepgate/executor/mcp"
)

func TestSanitizeAndFullName(t *testing.T) {
	for in, want := range map[string]string{"echo": "echo", "a.b/c d": "a_b_c_d", "é": "__", "ok-_9": "ok-_9", "": ""} {
		if got := mcp.Sanitize(in); got != want {
			t.Errorf("Sanitize(%q) = %q, want %q", in, got, want)
		}
	}
	if got := mcp.FullName("srv", "x.y"); got != "mcp__srv__x_y" {
		t.Errorf("FullName = %q", got)
	}
}

func schemaTool(name string, ann *sdk.ToolAnnotations) *sdk.Tool {
	return &sdk.Tool{Name: name, Description: "d", InputSchema: map[string]any{"type": "object"}, Annotations: ann}
}

func TestConvertEffects(t *testing.T) {
	tools := []*sdk.Tool{
		schemaTool("ro", &sdk.ToolAnnotations{ReadOnlyHint: true}),
		schemaTool("idem", &sdk.ToolAnnotations{IdempotentHint: true}),
		schemaTool("both", &sdk.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true}),
		schemaTool("none", nil),
		schemaTool("destructive", &sdk.ToolAnnotations{DestructiveHint: new(true)}),
	}
	want := map[bool]map[string]descriptor.EffectClass{
		true: {"ro": descriptor.ReadOnly, "idem": descriptor.Idempotent, "both": descriptor.ReadOnly,
			"none": descriptor.SideEffecting, "destructive": descriptor.SideEffecting},
		false: {"ro": descriptor.SideEffecting, "idem": descriptor.SideEffecting, "both": descriptor.SideEffecting,
			"none": descriptor.SideEffecting, "destructive": descriptor.SideEffecting},
	}
	for trust, effects := range want {
		conv, skipped := mcp.Convert("s", trust, tools, 0)
		if len(skipped) != 0 || len(conv) != len(tools) {
			t.Fatalf("trust %v: %d converted, skipped %v", trust, len(conv), skipped)
		}
		for _, c := range conv {
			if e := effects[c.Remote]; c.Descriptor.Effect != e {
				t.Errorf("trust %v: %s is %s, want %s", trust, c.Remote, c.Descriptor.Effect, e)
			}
		}
	}
}

func TestConvertBoundsDescriptions(t *testing.T) {
	tool := schemaTool("t", nil)
	tool.Description = strings.Repeat("é", 100) + "\x00\x1b[31m"
	conv, _ := mcp.Convert("s", false, []*sdk.Tool{tool}, 51)
	d := conv[0].Descriptor.Description
	if len(d) > 51 || !utf8.ValidString(d) || !strings.HasSuffix(d, "…") || strings.ContainsAny(d, "\x00\x1b") {
		t.Fatalf("description %q (%d bytes)", d, len(d))
	}
}

func TestScopeIsContentAddressed(t *testing.T) {
	tools := []*sdk.Tool{schemaTool("a", &sdk.ToolAnnotations{ReadOnlyHint: true}), schemaTool("b", nil)}
	descs := func(trust bool, tools []*sdk.Tool) []descriptor.Descriptor {
		conv, _ := mcp.Convert("s", trust, tools, 0)
		var out []descriptor.Descriptor
		for _, c := range conv {
			out = append(out, c.Descriptor)
		}
		return out
	}
	one := mcp.Scope("s", descs(true, tools))
	rev := slices.Clone(descs(true, tools))
	slices.Reverse(rev)
	if mcp.Scope("s", rev) != one {
		t.Error("the order of the descriptors changed the scope")
	}
	if mcp.Scope("s", descs(false, tools)) == one {
		t.Error("a changed effect class kept the scope")
	}
	if mcp.Scope("s", descs(true, tools[:1])) == one {
		t.Error("a removed tool kept the scope")
	}
	if mcp.Scope("s2", descs(true, tools)) == one {
		t.Error("another server kept the scope")
	}
	long := mcp.Scope(strings.Repeat("x", 32), nil)
	if len(long) > 64 {
		t.Errorf("scope %q is %d bytes", long, len(long))
	}
}

// FuzzConvert feeds arbitrary tools/list results to Convert: it never
// panics, every tool is either converted or skipped (never both, never
// lost), and each converted descriptor is valid, named mcp__<server>__…,
// unique, with its name as its action, bounded in description, and
// side-effecting unless trusted; NewRaw accepts each one.
func FuzzConvert(f *testing.F) {
	for _, s := range []string{
		`{"tools":[{"name":"echo","inputSchema":{"type":"object","properties":{"text":{"type":"string"}}},"annotations":{"readOnlyHint":true}}]}`,
		`{"tools":[{"name":"a.b","inputSchema":{"type":"object"}},{"name":"a_b","inputSchema":{"type":"object"}}]}`,
		`{"tools":[{"name":"x","inputSchema":{"type":"string"}}]}`,
		`{"tools":[{"name":"x","inputSchema":{"type":"object","$ref":"http://evil.invalid/s.json"}}]}`,
		`{"tools":[{"name":"","inputSchema":{"type":"object"}},{"name":"é/ü","description":"\u0000x","inputSchema":{"type":"object"},"outputSchema":{"type":"nope"}}]}`,
		`{"tools":[{"name":"y","inputSchema":null}]}`,
		`{"tools":[null]}`,
	} {
		f.Add([]byte(s), true)
	}
	f.Fuzz(func(t *testing.T, data []byte, trust bool) {
		var list sdk.ListToolsResult
		if json.Unmarshal(data, &list) != nil {
			return
		}
		conv, skipped := mcp.Convert("srv", trust, list.Tools, 200)
		n := 0
		for _, tool := range list.Tools {
			if tool != nil {
				n++
			}
		}
		if len(conv)+len(skipped) != n {
			t.Fatalf("%d tools became %d converted and %d skipped", n, len(conv), len(skipped))
		}
		seen := map[string]bool{}
		for _, c := range conv {
			d := c.Descriptor
			if err := d.Validate(); err != nil {
				t.Fatalf("converted an invalid descriptor %+v: %v", d, err)
			}
			if !strings.HasPrefix(d.Name, "mcp__srv__") || d.Name != mcp.FullName("srv", c.Remote) || d.Action != d.Name || seen[d.Name] {
				t.Fatalf("descriptor %+v of %q", d, c.Remote)
			}
			seen[d.Name] = true
			if len(d.Description) > 200 || !utf8.ValidString(d.Description) {
				t.Fatalf("description %q", d.Description)
			}
			if !trust && d.Effect != descriptor.SideEffecting {
				t.Fatalf("untrusted %s is %s", d.Name, d.Effect)
			}
			if _, err := executor.NewRaw(d, func(_ context.Context, _ executor.Call, _ json.RawMessage) (executor.Result, error) {
				return executor.Result{}, nil
			}); err != nil {
				t.Fatalf("NewRaw refused a converted descriptor: %v", err)
			}
		}
		for _, s := range skipped {
			if s.Reason == "" || strings.Contains(s.Reason, "\n") || seen[s.Name] || s.Name != mcp.FullName("srv", s.Remote) {
				t.Fatalf("skipped %+v", s)
			}
		}
	})
}
