import { Controller, Get, Query, Res, UnauthorizedException } from '@nestjs/common';
import type { Response } from 'express';
import { config } from '../config';

/** Signs an admin in (sets the cookie AdminGuard reads) and sends them to the dashboard. */
@Controller('admin')
export class AdminController {
  @Get('login')
  login(@Query('key') key: string, @Res() response: Response): void {
    if (key !== config.adminKey) throw new UnauthorizedException('Wrong admin key.');
    response.cookie('admin_key', key, { httpOnly: true, sameSite: 'strict', path: '/' }).redirect('/durable/');
  }
}
