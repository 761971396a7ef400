package app_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestDependencies_NoAdapter keeps the use cases embeddable: what a program that imports
// package app builds must hold none of the adapters' libraries, nor any adapter.
func TestDependencies_NoAdapter(t *testing.T) {
	t.Parallel()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to list the dependencies: %v", err)
	}
	out, err := exec.Command(goTool, "list", "-deps", "github.com/retsu/retsu/app").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	forbidden := []string{
		"github.com/jackc/pgx", "github.com/redis/rueidis", "github.com/gorilla/mux",
		"github.com/golang-migrate/migrate", "github.com/prometheus/client_golang",
		"github.com/retsu/retsu/adapters/",
	}
	for _, dependency := range strings.Fields(string(out)) {
		for _, prefix := range forbidden {
			if strings.HasPrefix(dependency, prefix) {
				t.Errorf("package app depends on %s", dependency)
			}
		}
	}
}
