'use strict';

var Route = require('./route');
var Layer = require('./layer');

var proto = module.exports = function(options) {
  function router(req, res, next) {
    router.handle(req, res, next);
  }
  router.stack = [];
  return router;
};

proto.route = function route(path) {
  var route = new Route(path);
  var layer = new Layer(path, {}, route.dispatch.bind(route));
  this.stack.push(layer);
  return route;
};

proto.handle = function handle(req, res, out) {
  var stack = this.stack;
  var idx = 0;
  next();
  function next(layerError) {
    var layer = stack[idx++];
    var route = layer.route;
    var has_method = route._handles_method(req.method);
    if (layerError) {
      layer.handle_error(layerError, req, res, next);
    } else if (has_method && layer.match(req.url)) {
      route.dispatch(req, res, next);
    }
  }
};
