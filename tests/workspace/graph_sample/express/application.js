'use strict';

var app = exports = module.exports = {};

app.init = function init() {
  this.settings = {};
  this.set('x-powered-by', true);
};

app.set = function set(setting, val) {
  this.settings[setting] = val;
  return this;
};
