'use strict';

var res = Object.create(null);

module.exports = res;

res.status = function status(code) {
  this.statusCode = code;
  return this;
};

res.json = function json(obj) {
  var body = JSON.stringify(obj);
  this.set('Content-Type', 'application/json');
  return this.status(200).send(body);
};

res.set = res.header = function header(field, val) {
  this.headers = this.headers || {};
  this.headers[field] = val;
  return this;
};
