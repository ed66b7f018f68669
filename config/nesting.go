package config

import (
	"fmt"

	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/lexer"
	"github.com/goccy/go-yaml/parser"
	"github.com/goccy/go-yaml/token"
)

// MaxNesting is how deep a configuration file's collections may nest
// (block and flow levels together). The YAML parser's time and memory grow
// with the square of the depth (each level builds its path from its
// parent's: 16 KiB of "[" took it 17 s and 560 MB, 64 KiB more than 6 GB),
// so a deeper file is refused before it is parsed. The count is taken from
// the tokens and is never less than half the depth the parser would build
// (FuzzNesting). The deepest section a configuration has is about six
// levels.
const MaxNesting = 64

// parseYAML parses data into a syntax tree: it lexes the text once,
// refuses nesting past MaxNesting (*Error at the line where it went too
// deep), then parses the tokens. A syntax error is the parser's, for the
// caller to place (see syntaxLine).
func parseYAML(path string, data []byte) (*ast.File, error) {
	toks := lexer.Tokenize(string(data))
	if tk := tooDeep(toks); tk != nil {
		return nil, &Error{File: path, Line: tk.Position.Line, Key: "(document)", Msg: fmt.Sprintf("nested deeper than %d levels", MaxNesting)}
	}
	return parser.Parse(toks, 0)
}

// blockLevel is an open block collection: the column of its indicator (a
// sequence's "-" or "?", or a mapping's key) and whether it is a sequence.
type blockLevel struct {
	col int
	seq bool
}

// tooDeep is the first token at which toks nest past MaxNesting, or nil.
func tooDeep(toks token.Tokens) *token.Token {
	_, over := nesting(toks, MaxNesting)
	return over
}

// nesting is how deep toks nest, up to the first token past limit (over;
// nil if none). Flow collections count their brackets, and a "k: v" pair
// inside a flow sequence one more (it is a mapping of its own); block
// collections count the indicators open at growing columns (a "-" at its
// parent key's column is that key's value, as YAML reads it). It reads each
// token once.
func nesting(toks token.Tokens, limit int) (deepest int, over *token.Token) {
	var block []blockLevel
	var flow []flowLevel
	pairs := 0 // flow sequences whose current entry is a pair
	for i, tk := range toks {
		switch tk.Type {
		case token.SequenceStartType, token.MappingStartType:
			flow = append(flow, flowLevel{seq: tk.Type == token.SequenceStartType})
		case token.SequenceEndType, token.MappingEndType:
			if n := len(flow); n > 0 {
				if flow[n-1].pair {
					pairs--
				}
				flow = flow[:n-1]
			}
		case token.CollectEntryType:
			if n := len(flow); n > 0 && flow[n-1].pair {
				flow[n-1].pair = false
				pairs--
			}
		case token.DocumentHeaderType, token.DocumentEndType:
			block, flow, pairs = block[:0], flow[:0], 0
		case token.SequenceEntryType, token.MappingKeyType:
			if len(flow) == 0 {
				block = openBlock(block, blockLevel{col: tk.Position.Column, seq: tk.Type == token.SequenceEntryType})
			}
		case token.MappingValueType:
			switch n := len(flow); {
			case n == 0 && i > 0:
				block = openBlock(block, blockLevel{col: toks[i-1].Position.Column})
			case n > 0 && flow[n-1].seq && !flow[n-1].pair:
				flow[n-1].pair = true
				pairs++
			}
		}
		deepest = max(deepest, len(block)+len(flow)+pairs)
		if deepest > limit {
			return deepest, tk
		}
	}
	return deepest, nil
}

// flowLevel is an open flow collection: a sequence or a mapping, and for a
// sequence whether its current entry is a "k: v" pair.
type flowLevel struct{ seq, pair bool }

// openBlock closes the levels l ends (those at its column or to its right,
// but for a key's own sequence at the key's column) and opens l.
func openBlock(block []blockLevel, l blockLevel) []blockLevel {
	for n := len(block); n > 0; n-- {
		top := block[n-1]
		if top.col < l.col || top.col == l.col && !top.seq && l.seq {
			break
		}
		block = block[:n-1]
	}
	return append(block, l)
}
