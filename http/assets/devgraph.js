// Mounts GraphiQL against this server's /graphql. Everything it loads comes from this
// server: the page makes no other network requests.
(function () {
  var fetcher = GraphiQL.createFetcher({ url: window.location.origin + '/graphql' });
  var root = ReactDOM.createRoot(document.getElementById('graphiql'));
  var defaultQuery = '# devgraph: identities, devices, tags, notes and the changelog.\n' +
    '{\n  stats { identities devices notes events }\n}\n';
  root.render(React.createElement(GraphiQL, {
    fetcher: fetcher,
    defaultQuery: defaultQuery,
    defaultEditorToolbarTabs: 'variables',
    shouldPersistHeaders: false,
  }));
})();
