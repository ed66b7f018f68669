package mcp_test

import (
	"errors"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stepgate/stepgate/executor"
	"github.com/stepgate/stepgate/executor/mcp"
)

func TestMapResultEdges(t *testing.T) {
	if _, err := mcp.MapResult(nil); !errors.Is(err, mcp.ErrUnavailable) {
		t.Errorf("nil result: %v", err)
	}
	res, err := mcp.MapResult(&sdk.CallToolResult{IsError: true, Content: []sdk.Content{
		&sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: "file:///p.png", MIMEType: "image/png", Blob: []byte{9}}},
		&sdk.EmbeddedResource{},
		&sdk.ImageContent{Data: []byte{1}},
		&sdk.ResourceLink{URI: "u", Name: "n"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	want := []executor.Part{
		{Type: executor.PartMedia, MIME: "image/png", Data: []byte{9}},
		{Type: executor.PartText, Text: "[resource without contents]"},
		{Type: executor.PartMedia, MIME: "application/octet-stream", Data: []byte{1}},
		{Type: executor.PartText, Text: "[resource link n: u]"},
	}
	if !res.IsError || len(res.Parts) != len(want) || res.Structured != nil {
		t.Fatalf("%+v", res)
	}
	for i, p := range want {
		if g := res.Parts[i]; g.Type != p.Type || g.Text != p.Text || g.MIME != p.MIME || string(g.Data) != string(p.Data) {
			t.Errorf("part %d: %+v, want %+v", i, g, p)
		}
	}
}
