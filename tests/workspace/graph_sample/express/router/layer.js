'use strict';

module.exports = Layer;

function Layer(path, options, fn) {
  this.handle = fn;
  this.path = path;
}

Layer.prototype.handle_error = function handle_error(error, req, res, next) {
  var fn = this.handle;
  if (fn.length !== 4) {
    return next(error);
  }
  fn(error, req, res, next);
};

Layer.prototype.match = function match(path) {
  return this.path === path;
};
