// Package dashboard serves Retsu's dashboard: the pages in which an operator watches queues,
// their backlog and their dead letters, and acts on them (settings, redrive, purge, delete).
//
// The pages are static files embedded in the binary: plain HTML, CSS and JavaScript modules,
// with no build step and nothing fetched from another host. They hold no data of their own:
// the browser calls the HTTP API for everything, with the API's bearer token, which the page
// asks for when the API answers 401 and keeps in the tab's sessionStorage. The token travels
// in the Authorization header, never in a cookie, so that another site cannot make the
// browser call the API on the operator's behalf; the dashboard's own files are public.
//
// Every page address under /ui/ answers the same index.html, so that each page (a queue, its
// dead letters) has an address that can be bookmarked and shared; the script then shows the
// page of the address. The other files live under /ui/assets/<version>/, where version is a
// digest of all the files: they are cached for good, index.html is revalidated on every
// load, and so a browser never mixes the files of two releases.
package dashboard
