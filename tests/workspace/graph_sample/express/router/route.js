'use strict';

var Layer = require('./layer');

module.exports = Route;

function Route(path) {
  this.path = path;
  this.stack = [];
  this.methods = {};
}

Route.prototype._handles_method = function _handles_method(method) {
  return Boolean(this.methods[method.toLowerCase()]);
};

Route.prototype.dispatch = function dispatch(req, res, done) {
  var stack = this.stack;
  var idx = 0;
  next();
  function next(err) {
    var layer = stack[idx++];
    if (!layer) {
      return done(err);
    }
    if (err) {
      layer.handle_error(err, req, res, next);
    }
  }
};

Route.prototype.get = function get(fn) {
  var layer = new Layer('/', {}, fn);
  this.stack.push(layer);
  return this;
};
