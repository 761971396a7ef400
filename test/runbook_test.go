package test

import (
	"bytes"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The runbook of docs/operations.md, "messages are piling up in dead letters", as an operator
// runs it: its curl commands, read from the document, against a real server whose queue has
// dead letters. Each must answer with the status its comment gives (200 when it gives a body)
// and a body with every member the comment shows, so that the runbook cannot drift from the
// API. Steps 4 and 5 are alternatives (send them back, or throw them away): the last block
// runs on a second queue of dead letters.
func TestRunbook_DeadLetters_CommandsAnswerAsDocumented(t *testing.T) {
	t.Parallel()
	c := setup(t)
	blocks := runbookBlocks(t, "../docs/operations.md", "## Runbook: messages are piling up in dead letters")
	if len(blocks) < 2 {
		t.Fatalf("the runbook has %d command blocks, want one per step", len(blocks))
	}
	q := c.poison(3)
	for i, block := range blocks {
		if i == len(blocks)-1 {
			q = c.poison(3)
		}
		letters := c.deadLetters(q.ID)
		// The document's IDs are examples; the real ones take their places in ID order,
		// which the examples follow (UUID version 7: enqueue order).
		documented := slices.Sorted(slices.Values(uniqueUUIDs(block)))
		vars := map[string]string{"$RETSU": c.base, "$Q": q.ID}
		if len(letters) > 0 {
			vars["$ID"] = letters[0].ID
		}
		for j, example := range documented {
			if j < len(letters) {
				vars[example] = letters[j].ID
			}
		}
		for _, cmd := range block {
			c.runRunbookCommand(t, cmd, vars)
		}
	}
}

// runbookCommand is one curl command of a runbook and the comment lines that follow it: the
// answer it documents.
type runbookCommand struct {
	line    string
	comment string
}

// runbookBlocks returns the commands of each ```sh block of the section of path that starts
// with heading, continuation lines joined. It fails the test when the section has a curl
// command outside them, which the test would not run.
func runbookBlocks(t *testing.T, path, heading string) [][]runbookCommand {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	start := strings.Index(doc, heading)
	if start < 0 {
		t.Fatalf("%s has no section %q", path, heading)
	}
	section := doc[start+len(heading):]
	if end := strings.Index(section, "\n## "); end >= 0 {
		section = section[:end]
	}
	var blocks [][]runbookCommand
	var block []runbookCommand
	inBlock, pending, commands, parsed := false, "", 0, 0
	for _, raw := range strings.Split(section, "\n") {
		line := strings.TrimSpace(raw)
		if strings.HasPrefix(line, "curl ") {
			commands++
		}
		switch {
		case line == "```sh":
			inBlock, block = true, nil
		case line == "```" && inBlock:
			inBlock = false
			blocks = append(blocks, block)
		case !inBlock || line == "":
		case strings.HasPrefix(line, "#"):
			if len(block) > 0 {
				block[len(block)-1].comment += " " + strings.TrimSpace(strings.TrimPrefix(line, "#"))
			}
		case strings.HasSuffix(line, `\`):
			pending += strings.TrimSuffix(line, `\`) + " "
		default:
			cmd, comment, _ := strings.Cut(pending+line, " # ")
			pending = ""
			block = append(block, runbookCommand{line: strings.TrimSpace(cmd), comment: comment})
			parsed++
		}
	}
	if commands == 0 || parsed != commands {
		t.Fatalf("%s: the runbook has %d curl commands, %d of them in ```sh blocks", path, commands, parsed)
	}
	return blocks
}

var (
	uuidPattern   = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	memberPattern = regexp.MustCompile(`"([a-z_]+)":`) // a JSON member's name, in a comment
)

// uniqueUUIDs returns the UUIDs that the commands of block name, each once.
func uniqueUUIDs(block []runbookCommand) []string {
	var ids []string
	for _, cmd := range block {
		for _, id := range uuidPattern.FindAllString(cmd.line, -1) {
			if !slices.Contains(ids, id) {
				ids = append(ids, id)
			}
		}
	}
	return ids
}

// runRunbookCommand sends the request of a curl command (-s, -X, -H, -d and a URL, with the
// shell's quoting), the variables of vars replaced, and checks its answer against the
// command's comment.
func (c *client) runRunbookCommand(t *testing.T, cmd runbookCommand, vars map[string]string) {
	t.Helper()
	line := cmd.line
	for name, value := range vars {
		line = strings.ReplaceAll(line, name, value)
	}
	words := shellWords(t, line)
	if len(words) == 0 || words[0] != "curl" {
		t.Fatalf("runbook command %q is not a curl command", cmd.line)
	}
	method, url, body, headers := "", "", "", http.Header{}
	for i := 1; i < len(words); i++ {
		switch words[i] {
		case "-s":
		case "-X":
			i++
			method = words[i]
		case "-H":
			i++
			name, value, _ := strings.Cut(words[i], ":")
			headers.Set(name, strings.TrimSpace(value))
		case "-d":
			i++
			body = words[i]
		default:
			if strings.HasPrefix(words[i], "-") || url != "" {
				t.Fatalf("runbook command %q: %q is not a curl option this test knows", cmd.line, words[i])
			}
			url = words[i]
		}
	}
	if method == "" {
		method = http.MethodGet
		if body != "" {
			method = http.MethodPost
		}
	}
	req, err := http.NewRequest(method, url, bytes.NewReader([]byte(body)))
	if err != nil {
		t.Fatalf("runbook command %q: %v", cmd.line, err)
	}
	req.Header = headers
	res := c.send(req)
	t.Logf("%s\n  -> %d %s", line, res.Status, res.Body)

	// A comment that starts with a status ("204, also when there is none") gives it;
	// one that shows a body, or none, means 200.
	want := http.StatusOK
	if fields := strings.Fields(cmd.comment); len(fields) > 0 {
		if status, err := strconv.Atoi(strings.TrimSuffix(fields[0], ",")); err == nil {
			want = status
		}
	}
	if res.Status != want {
		t.Fatalf("runbook command %q answered %d %s, the runbook says %d", cmd.line, res.Status, res.Body, want)
	}
	for _, member := range memberPattern.FindAllStringSubmatch(cmd.comment, -1) {
		if !bytes.Contains(res.Body, []byte(`"`+member[1]+`":`)) {
			t.Errorf("runbook command %q answered %s, without the member %q its comment shows", cmd.line, res.Body, member[1])
		}
	}
}

// shellWords splits line into words as a POSIX shell does for the quoting the runbook uses:
// single quotes, double quotes and blanks.
func shellWords(t *testing.T, line string) []string {
	t.Helper()
	var words []string
	var word strings.Builder
	inWord := false
	for i := 0; i < len(line); i++ {
		switch ch := line[i]; {
		case ch == '\'' || ch == '"':
			end := strings.IndexByte(line[i+1:], ch)
			if end < 0 {
				t.Fatalf("unbalanced %c in %q", ch, line)
			}
			word.WriteString(line[i+1 : i+1+end])
			i += end + 1
			inWord = true
		case ch == ' ' || ch == '\t':
			if inWord {
				words = append(words, word.String())
				word.Reset()
				inWord = false
			}
		default:
			word.WriteByte(ch)
			inWord = true
		}
	}
	if inWord {
		words = append(words, word.String())
	}
	return words
}
