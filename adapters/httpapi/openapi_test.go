package httpapi

import (
	"log/slog"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/gorilla/mux"
	"github.com/matryer/is"
	"go.yaml.in/yaml/v3"
)

// openAPIPath is the API's OpenAPI document, from this package's folder.
const openAPIPath = "../../docs/openapi.yaml"

// openAPI is the part of the document that the tests compare with the code.
type openAPI struct {
	OpenAPI    string                          `yaml:"openapi"`
	Paths      map[string]map[string]yaml.Node `yaml:"paths"`
	Components struct {
		Schemas struct {
			Problem struct {
				Properties struct {
					Code struct {
						Enum []string `yaml:"enum"`
					} `yaml:"code"`
				} `yaml:"properties"`
			} `yaml:"Problem"`
		} `yaml:"schemas"`
	} `yaml:"components"`
}

func readOpenAPI(t *testing.T) openAPI {
	t.Helper()
	is := is.New(t)
	data, err := os.ReadFile(openAPIPath)
	is.NoErr(err) // the document exists
	var doc openAPI
	is.NoErr(yaml.Unmarshal(data, &doc)) // and is YAML
	is.Equal(doc.OpenAPI, "3.1.0")       // of OpenAPI 3.1
	return doc
}

// operationKeys are the keys of an OpenAPI path item that name an operation.
var operationKeys = []string{"get", "put", "post", "delete", "options", "head", "patch", "trace"}

func TestOpenAPI_ListsTheRoutesAndMethodsOfTheRouter(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	doc := readOpenAPI(t)
	a := &api{log: slog.New(slog.DiscardHandler), metrics: http.NotFoundHandler()}

	registered := map[string][]string{}
	err := a.routes().Walk(func(route *mux.Route, _ *mux.Router, _ []*mux.Route) error {
		template, err := route.GetPathTemplate()
		is.NoErr(err) // every route has a path template
		set, ok := route.GetHandler().(*methodSet)
		is.True(ok) // every route dispatches on its methods
		for method := range set.handlers {
			registered[template] = append(registered[template], strings.ToLower(method))
		}
		return nil
	})
	is.NoErr(err)
	documented := map[string][]string{}
	for path, item := range doc.Paths {
		for _, key := range operationKeys {
			if _, ok := item[key]; ok {
				documented[path] = append(documented[path], key)
			}
		}
	}
	for _, methods := range registered {
		slices.Sort(methods)
	}
	for _, methods := range documented {
		slices.Sort(methods)
	}

	is.Equal(documented, registered) // the document lists exactly the routes and methods that are served
}

func TestOpenAPI_ListsEveryErrorCode(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	doc := readOpenAPI(t)

	var answered []string
	for code := range statusByCode {
		answered = append(answered, string(code))
	}
	slices.Sort(answered)
	documented := slices.Sorted(slices.Values(doc.Components.Schemas.Problem.Properties.Code.Enum))

	is.Equal(documented, answered) // the document's codes are exactly those the API answers with
}
