package builtin

import (
	"io"
	"regexp"
	"strings"
	"sync"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// htmlToText renders an HTML document as readable text, or as Markdown
// (headings, links, list items, emphasis, code) when markdown is set.
// Scripts, styles and the document head are dropped.
func htmlToText(r io.Reader, markdown bool) string {
	z := html.NewTokenizer(r)
	var b strings.Builder
	skip := 0 // depth inside elements whose text is not content
	pre := 0
	var href []string // open links' targets
	for {
		tt := z.Next()
		switch tt {
		case html.ErrorToken:
			return tidy(b.String())
		case html.TextToken:
			if skip > 0 {
				continue
			}
			text := string(z.Text())
			if pre == 0 {
				text = spaces().ReplaceAllString(text, " ")
			}
			b.WriteString(text)
		case html.StartTagToken, html.SelfClosingTagToken:
			name, hasAttr := z.TagName()
			a := atom.Lookup(name)
			if skipped(a) {
				if tt == html.StartTagToken {
					skip++
				}
				continue
			}
			if skip > 0 {
				continue
			}
			switch a {
			case atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6:
				b.WriteString("\n\n")
				if markdown {
					b.WriteString(strings.Repeat("#", int(name[1]-'0')) + " ")
				}
			case atom.P, atom.Div, atom.Section, atom.Article, atom.Table, atom.Ul, atom.Ol, atom.Blockquote, atom.Header, atom.Footer, atom.Main, atom.Nav:
				b.WriteString("\n\n")
			case atom.Br, atom.Tr:
				b.WriteString("\n")
			case atom.Td, atom.Th:
				b.WriteString(" ")
			case atom.Li:
				b.WriteString("\n- ")
			case atom.Pre:
				pre++
				b.WriteString("\n\n")
				if markdown {
					b.WriteString("```\n")
				}
			case atom.Code, atom.Strong, atom.B, atom.Em, atom.I:
				if markdown && pre == 0 {
					b.WriteString(inlineMark(a))
				}
			case atom.A:
				target := ""
				for hasAttr {
					var k, v []byte
					k, v, hasAttr = z.TagAttr()
					if string(k) == "href" {
						target = string(v)
					}
				}
				if tt == html.StartTagToken {
					href = append(href, target)
					if markdown && target != "" {
						b.WriteString("[")
					}
				}
			}
		case html.EndTagToken:
			name, _ := z.TagName()
			a := atom.Lookup(name)
			if skipped(a) {
				if skip > 0 {
					skip--
				}
				continue
			}
			if skip > 0 {
				continue
			}
			switch a {
			case atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6, atom.P, atom.Div, atom.Ul, atom.Ol, atom.Table, atom.Blockquote:
				b.WriteString("\n\n")
			case atom.Pre:
				if pre > 0 {
					pre--
				}
				if markdown {
					b.WriteString("\n```")
				}
				b.WriteString("\n\n")
			case atom.Code, atom.Strong, atom.B, atom.Em, atom.I:
				if markdown && pre == 0 {
					b.WriteString(inlineMark(a))
				}
			case atom.A:
				if n := len(href); n > 0 {
					if markdown && href[n-1] != "" {
						b.WriteString("](" + href[n-1] + ")")
					}
					href = href[:n-1]
				}
			}
		}
	}
}

// inlineMark is the Markdown that opens and closes an inline element.
func inlineMark(a atom.Atom) string {
	switch a {
	case atom.Strong, atom.B:
		return "**"
	case atom.Em, atom.I:
		return "_"
	}
	return "`"
}

// The expressions of a page's text, compiled when the first page is
// converted (web_fetch), not at every start of the binary.
var (
	spaces     = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[ \t\r\n\f]+`) })
	blankLines = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\n[ \t]*(\n[ \t]*)+\n`) })
	lineSpace  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?m)^[ \t]+|[ \t]+$`) })
)

// tidy trims each line and leaves at most one blank line between blocks.
func tidy(s string) string {
	s = lineSpace().ReplaceAllString(s, "")
	s = blankLines().ReplaceAllString(s, "\n\n")
	return strings.TrimSpace(s)
}

// skipped reports whether an element's content is not text for the model.
func skipped(a atom.Atom) bool {
	switch a {
	case atom.Script, atom.Style, atom.Noscript, atom.Head, atom.Template, atom.Svg:
		return true
	}
	return false
}
